import type * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { loadSshService } from '../lib/proto.js';
import { loadSmartHttpService } from '../lib/proto-smarthttp.js';
import type { YamuxSession } from '../lib/yamux/index.js';
import { observedImplementation } from './rpc-journal.js';
import { smartHttpServiceImplementation } from './smarthttp-service.js';
import { type ServiceContext, sshServiceImplementation } from './ssh-service.js';

/**
 * The grpc-js servers of mock Gitaly (the shared plain one and one per backchannel session): how
 * one is made with the SSH service, and how a set of them shuts down.
 */

/**
 * Gitaly accepts client keepalive pings down to 10 s (gitaly!4772). grpc-js servers answer pings
 * without enforcing a minimum interval, so these options only state the policy for clients to rely on.
 */
const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 10_000,
};

/**
 * HTTP/2 receive windows of every server connection: per stream and for the connection. Node's and
 * grpc-js's default is 64 KiB for both, so a push (the client's `stdin` messages) had at most 64 KiB in
 * flight per round trip through both event loops and yamux. Gitaly's grpc-go grows its windows by
 * BDP estimation up to 16 MiB; these fixed ones stand for that. A call paused by git's full stdin
 * still stops its sender once the stream window is used up.
 */
export const RECEIVE_STREAM_WINDOW = 2 * 1024 * 1024;
export const RECEIVE_CONNECTION_WINDOW = 16 * 1024 * 1024;

interface Http2ServerFactory {
  createHttp2Server?: (credentials: grpc.ServerCredentials) => http2.Http2Server;
  commonServerOptions?: http2.ServerOptions;
}

/**
 * grpc-js has no server option for its receive windows: the stream window goes into the HTTP/2
 * settings it creates each connection's server with, the connection window is set on each session.
 * Both through grpc-js internals (1.14); without them the defaults stay and only speed suffers.
 */
export function widenReceiveWindows(server: grpc.Server): void {
  const internals = server as unknown as Http2ServerFactory;
  const create = internals.createHttp2Server;
  const common = internals.commonServerOptions;
  if (typeof create !== 'function' || common === undefined) return;
  common.settings = { ...common.settings, initialWindowSize: RECEIVE_STREAM_WINDOW };
  internals.createHttp2Server = (credentials) => {
    const h2 = create.call(server, credentials);
    h2.on('session', (session: http2.ServerHttp2Session) =>
      session.setLocalWindowSize(RECEIVE_CONNECTION_WINDOW),
    );
    return h2;
  };
}

/**
 * Makes grpc-js servers serving the SSH and smart HTTP services; with a session, their RPCs can open
 * sidechannels on it.
 */
export function sshServerFactory(ctx: ServiceContext): (session?: YamuxSession) => grpc.Server {
  const service = loadSshService().service;
  const smartHttp = loadSmartHttpService().service;
  return (session?: YamuxSession) => {
    const server = new grpc.Server(SERVER_OPTIONS);
    widenReceiveWindows(server);
    const transport = session ? 'backchannel' : 'plain';
    const impl = sshServiceImplementation(ctx, session);
    server.addService(service, observedImplementation(ctx.world, ctx.config.token, service, impl, transport));
    const smartHttpImpl = smartHttpServiceImplementation(ctx, session);
    server.addService(
      smartHttp,
      observedImplementation(ctx.world, ctx.config.token, smartHttp, smartHttpImpl, transport),
    );
    return server;
  };
}

/** tryShutdown on every server; after `graceMs`, `onTimeout` and forceShutdown. */
export async function shutdownServers(servers: grpc.Server[], graceMs: number, onTimeout: () => void) {
  await new Promise<void>((resolve) => {
    let pending = servers.length;
    const timer = setTimeout(() => {
      onTimeout();
      for (const server of servers) server.forceShutdown();
      resolve();
    }, graceMs);
    const one = () => {
      pending -= 1;
      if (pending > 0) return;
      clearTimeout(timer);
      resolve();
    };
    if (pending === 0) one();
    for (const server of servers) server.tryShutdown(one);
  });
}

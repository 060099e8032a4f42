import * as grpc from '@grpc/grpc-js';
import { loadSshService } from '../lib/proto.js';
import type { YamuxSession } from '../lib/yamux/index.js';
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

/** Makes grpc-js servers serving the SSH service; with a session, its RPCs can open sidechannels on it. */
export function sshServerFactory(ctx: ServiceContext): (session?: YamuxSession) => grpc.Server {
  const service = loadSshService().service;
  return (session?: YamuxSession) => {
    const server = new grpc.Server(SERVER_OPTIONS);
    server.addService(service, sshServiceImplementation(ctx, session));
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

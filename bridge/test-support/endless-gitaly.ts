import net from 'node:net';
import type { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { loadSshService, type SSHReceivePackRequest, type SSHStreamResponse } from '../../lib/proto.js';
import { encodeSideband } from '../../lib/sidechannel.js';
import type { YamuxSession } from '../../lib/yamux/index.js';
import { silentLogger } from '../../mock-cell/test-support/fixtures.js';
import { BackchannelSessions } from '../../mock-gitaly/backchannel.js';
import type { GitalyConfig } from '../../mock-gitaly/config.js';
import { peekMagic } from '../../mock-gitaly/listener.js';
import { openSidechannel, sidechannelId } from '../../mock-gitaly/sidechannel-open.js';

/**
 * The one Gitaly test double of the bridge's tests. Everything else runs against the real mock
 * Gitaly (real git); this one exists for two behaviours real git cannot be made to show on demand:
 *
 * - `SSHUploadPackWithSidechannel` opens the sidechannel (mock Gitaly's own backchannel listener and
 *   sidechannel handshake) and floods band-1 packets of 64 KiB up to `responseBytes` (1 GiB by
 *   default), honouring the yamux window, and counts what the stream accepted, so a test can see
 *   whether a stalled reader throttled it. No repository, no git process.
 * - `SSHReceivePack` never reads the request stream after the first message, as a git that does not
 *   read its stdin: the bridge must stop reading the client's body.
 *
 * It does not check the token: authentication is tested against the real mock Gitaly.
 */

const CHUNK = Buffer.concat(encodeSideband(1, Buffer.alloc(65515, 0x61)));
const CHUNK_DATA = 65515;

type Call = grpc.ServerDuplexStream<SSHReceivePackRequest, SSHStreamResponse>;

export interface EndlessCall {
  rpc: 'SSHUploadPackWithSidechannel' | 'SSHReceivePack';
  correlationId: string | undefined;
  /** stdout bytes the sidechannel stream accepted so far. */
  sent: number;
  /** Resolves when the client cancelled the call. */
  cancelled: Promise<void>;
  /** Ends the call successfully (for a test to let a stuck tunnel go). */
  end(): void;
}

export interface EndlessGitaly {
  /** `tcp://127.0.0.1:<port>`, as Rails would send it. */
  address: string;
  calls: EndlessCall[];
  /** The call whose `x-gitlab-correlation-id` is `id`. */
  call(id: string): EndlessCall | undefined;
  close(): Promise<void>;
}

function correlationId(metadata: grpc.Metadata): string | undefined {
  const [id] = metadata.get('x-gitlab-correlation-id');
  return typeof id === 'string' ? id : undefined;
}

export async function startEndlessGitaly(opts: { responseBytes?: number } = {}): Promise<EndlessGitaly> {
  const limit = opts.responseBytes ?? 1024 * 1024 * 1024;
  const calls: EndlessCall[] = [];

  const flood = (
    session: YamuxSession,
    call: grpc.ServerUnaryCall<unknown, unknown>,
    callback: grpc.sendUnaryData<unknown>,
  ) => {
    let stream: Duplex | undefined;
    const entry: EndlessCall = {
      rpc: 'SSHUploadPackWithSidechannel',
      correlationId: correlationId(call.metadata),
      sent: 0,
      cancelled: new Promise((resolve) => call.once('cancelled', () => resolve())),
      end: () => {
        stream?.end();
        callback(null, {});
      },
    };
    calls.push(entry);
    void openSidechannel(session, sidechannelId(call.metadata), { timeoutMs: 5000 }).then(
      (opened) => {
        stream = opened;
        opened.resume();
        const pump = () => {
          while (!call.cancelled && !opened.destroyed && entry.sent < limit) {
            entry.sent += CHUNK_DATA;
            if (!opened.write(CHUNK)) {
              opened.once('drain', pump);
              return;
            }
          }
          if (!call.cancelled && !opened.destroyed) entry.end();
        };
        pump();
      },
      (err: Error) => callback({ code: grpc.status.INTERNAL, details: err.message }),
    );
  };

  const deaf = (call: Call) => {
    calls.push({
      rpc: 'SSHReceivePack',
      correlationId: correlationId(call.metadata),
      sent: 0,
      cancelled: new Promise((resolve) => call.once('cancelled', () => resolve())),
      end: () => call.end(),
    });
    call.once('data', () => call.pause());
  };

  const sessions = new BackchannelSessions({
    config: { yamuxFlavour: 'hashicorp', eagerBackchannel: false } as GitalyConfig,
    logger: silentLogger,
    makeServer: (session) => {
      const server = new grpc.Server();
      server.addService(loadSshService().service, {
        SSHUploadPackWithSidechannel: (
          call: grpc.ServerUnaryCall<unknown, unknown>,
          callback: grpc.sendUnaryData<unknown>,
        ) => flood(session, call, callback),
        SSHReceivePack: deaf,
      });
      return server;
    },
  });
  const sockets = new Set<net.Socket>();
  const listener = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    peekMagic(socket, { backchannel: (s) => sessions.serve(s), plain: (s) => s.destroy() }, silentLogger);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as net.AddressInfo;
  return {
    address: `tcp://127.0.0.1:${port}`,
    calls,
    call: (id) => calls.find((c) => c.correlationId === id),
    close: async () => {
      listener.close();
      sessions.closeAll();
      for (const socket of sockets) socket.destroy();
    },
  };
}

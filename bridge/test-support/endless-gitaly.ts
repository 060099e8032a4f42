import * as grpc from '@grpc/grpc-js';
import { loadSshService, type SSHReceivePackRequest, type SSHStreamResponse } from '../../lib/proto.js';

/**
 * The one Gitaly test double of the bridge's tests. Everything else runs against the real mock
 * Gitaly (real git); this one exists for two behaviours real git cannot be made to show on demand:
 *
 * - `SSHUploadPack` streams stdout of 128 KiB messages (Gitaly's chunk size) up to `responseBytes`
 *   (1 GiB by default), honouring grpc-js backpressure, and counts what grpc-js accepted, so a test
 *   can see whether a stalled reader throttled it. No repository, no git process.
 * - `SSHReceivePack` never reads the request stream after the first message, as a git that does not
 *   read its stdin: the bridge must stop reading the client's body.
 *
 * It does not check the token: authentication is tested against the real mock Gitaly.
 */

const CHUNK = Buffer.alloc(128 * 1024, 0x61);

type Call = grpc.ServerDuplexStream<SSHReceivePackRequest, SSHStreamResponse>;

export interface EndlessCall {
  rpc: 'SSHUploadPack' | 'SSHReceivePack';
  correlationId: string | undefined;
  /** stdout bytes handed to grpc-js so far. */
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

export async function startEndlessGitaly(opts: { responseBytes?: number } = {}): Promise<EndlessGitaly> {
  const limit = opts.responseBytes ?? 1024 * 1024 * 1024;
  const calls: EndlessCall[] = [];
  const server = new grpc.Server();

  const record = (rpc: EndlessCall['rpc'], call: Call): EndlessCall => {
    const [id] = call.metadata.get('x-gitlab-correlation-id');
    const entry: EndlessCall = {
      rpc,
      correlationId: typeof id === 'string' ? id : undefined,
      sent: 0,
      cancelled: new Promise((resolve) => call.once('cancelled', () => resolve())),
      end: () => call.end(),
    };
    calls.push(entry);
    return entry;
  };

  const flood = (call: Call) => {
    const entry = record('SSHUploadPack', call);
    call.once('data', () => {
      const pump = () => {
        while (!call.cancelled && entry.sent < limit) {
          entry.sent += CHUNK.length;
          if (!call.write({ stdout: CHUNK })) {
            call.once('drain', pump);
            return;
          }
        }
        if (!call.cancelled) call.end();
      };
      pump();
    });
  };

  const deaf = (call: Call) => {
    record('SSHReceivePack', call);
    call.once('data', () => call.pause());
  };

  server.addService(loadSshService().service, { SSHUploadPack: flood, SSHReceivePack: deaf });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `tcp://127.0.0.1:${port}`,
    calls,
    call: (id) => calls.find((c) => c.correlationId === id),
    close: async () => server.forceShutdown(),
  };
}

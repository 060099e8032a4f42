import * as grpc from '@grpc/grpc-js';
import { loadSshService, type SSHStreamResponse, type SSHUploadPackRequest } from '../lib/proto.js';
import { keystream } from './repo-gen.js';

/**
 * Contender 5's server process: a grpc-js `gitaly.SSHService` whose `SSHUploadPack` streams the
 * number of bytes asked for in the `x-bench-bytes` metadata as 128 KiB `stdout` messages (Gitaly's
 * chunk size), honouring backpressure, then `exit_status 0`. No git, no disk: the ceiling for
 * anything built on grpc-js here. Prints `{"port":N}` on stdout once listening; SIGTERM stops it.
 */
export const CHUNK_BYTES = 128 * 1024;
const chunk = keystream('cells-bench-grpc-floor')(CHUNK_BYTES);

type Call = grpc.ServerDuplexStream<SSHUploadPackRequest, SSHStreamResponse>;

function uploadPack(call: Call): void {
  const total = Number(call.metadata.get('x-bench-bytes')[0] ?? 0);
  call.on('error', () => undefined);
  call.once('data', () => {
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        const n = Math.min(CHUNK_BYTES, total - sent);
        sent += n;
        if (!call.write({ stdout: n === CHUNK_BYTES ? chunk : chunk.subarray(0, n) })) {
          call.once('drain', pump);
          return;
        }
      }
      call.write({ exit_status: { value: 0 } });
      call.end();
    };
    pump();
  });
  call.on('data', () => undefined); // stdin is not used
}

const server = new grpc.Server({
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 10_000,
});
const Service = loadSshService();
const notUsed = (_call: unknown, cb?: unknown) => {
  if (typeof cb === 'function') cb({ code: grpc.status.UNIMPLEMENTED });
};
server.addService(Service.service, {
  SSHUploadPack: uploadPack,
  SSHUploadPackWithSidechannel: notUsed,
  SSHReceivePack: (call: Call) => call.destroy(new Error('not implemented')),
  SSHUploadArchive: (call: Call) => call.destroy(new Error('not implemented')),
});
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`grpc floor server cannot listen: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
const stop = () => server.tryShutdown(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

import * as grpc from '@grpc/grpc-js';
import { gitalyAuthHeader } from '../lib/gitaly-auth.js';
import { loadSshService, type SSHStreamResponse, type SSHUploadPackRequest } from '../lib/proto.js';
import { uploadPackBody } from './bridge-client.js';

/**
 * Diagnostic contender: the bridge's own Gitaly call without the bridge — a grpc-js client (channel
 * options as the bridge's) calling the cell's mock Gitaly `SSHUploadPack` with the same request.
 * Bridge-only ÷ this isolates what the bridge adds; this ÷ the gRPC floor is git and mock Gitaly.
 */
export interface GitalyTarget {
  /** `host:port` of the cell's Gitaly. */
  address: string;
  token: string;
  storage: string;
  /** Where a project's repository lives in the storage, and its `gl_repository`. */
  repository(project: string): { relativePath: string; glRepository: string };
}

export class GitalyDirect {
  private readonly Service = loadSshService();
  private readonly client: grpc.Client;

  constructor(private readonly target: GitalyTarget) {
    this.client = new this.Service(target.address, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 20_000,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    });
  }

  /** One upload-pack of `wants` from `project`; resolves with the stdout bytes once git exited 0. */
  uploadPack(
    project: string,
    wants: readonly string[],
    timeoutMs: number,
  ): Promise<{ stdoutBytes: number; ms: number }> {
    const def = this.Service.service.SSHUploadPack;
    if (!def) return Promise.reject(new Error('gitaly.SSHService has no SSHUploadPack'));
    const repo = this.target.repository(project);
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const md = new grpc.Metadata();
      md.set('authorization', gitalyAuthHeader(this.target.token));
      const call = this.client.makeBidiStreamRequest(
        def.path,
        def.requestSerialize as (v: SSHUploadPackRequest) => Buffer,
        def.responseDeserialize as (b: Buffer) => SSHStreamResponse,
        md,
        { deadline: Date.now() + timeoutMs },
      );
      let stdoutBytes = 0;
      let stderr = '';
      let exitStatus: number | undefined;
      call.on('data', (m: SSHStreamResponse) => {
        if (m.stdout) stdoutBytes += m.stdout.length;
        if (m.stderr) stderr = (stderr + m.stderr.toString()).slice(-2048);
        if (m.exit_status) exitStatus = m.exit_status.value ?? 0;
      });
      call.on('error', reject);
      call.on('end', () => {
        if ((exitStatus ?? 0) !== 0) reject(new Error(`upload-pack exit ${exitStatus}: ${stderr.trim()}`));
        else resolve({ stdoutBytes, ms: performance.now() - started });
      });
      call.write({
        repository: {
          storage_name: this.target.storage,
          relative_path: repo.relativePath,
          gl_repository: repo.glRepository,
        },
      });
      call.write({ stdin: uploadPackBody(wants) });
      call.end();
    });
  }

  close(): void {
    this.client.close();
  }
}

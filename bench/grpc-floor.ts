import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  loadSshService,
  projectRoot,
  type SSHStreamResponse,
  type SSHUploadPackRequest,
} from '../lib/proto.js';
import { stopChild, track } from './proc.js';

/**
 * Contender 5: a grpc-js client (this process, channel options as the bridge's Gitaly client) reading
 * `SSHUploadPack` from the floor server (its own process, `grpc-floor-server.ts`).
 */
export interface GrpcFloor {
  pid: number;
  /** Streams `bytes` of stdout; resolves with the time from call start to the last message. */
  stream(bytes: number, timeoutMs: number): Promise<{ stdoutBytes: number; ms: number }>;
  stop(): Promise<void>;
}

/** The port the floor server prints as its first line (`{"port":…}`). */
function announcedPort(child: ChildProcess): Promise<number> {
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4096);
  });
  return new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('grpc floor server did not start in 15 s')), 15_000);
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`grpc floor server exited (${code}): ${stderr.trim()}`));
    });
  });
}

type UploadPackDef = grpc.MethodDefinition<SSHUploadPackRequest, SSHStreamResponse>;

/** One `SSHUploadPack` call asking the floor server for `bytes` of stdout, read to the end. */
function floorStream(
  client: grpc.Client,
  def: UploadPackDef,
  bytes: number,
  timeoutMs: number,
): Promise<{ stdoutBytes: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const md = new grpc.Metadata();
    md.set('x-bench-bytes', String(bytes));
    const call = client.makeBidiStreamRequest(
      def.path,
      def.requestSerialize as (v: SSHUploadPackRequest) => Buffer,
      def.responseDeserialize as (b: Buffer) => SSHStreamResponse,
      md,
      { deadline: Date.now() + timeoutMs },
    );
    let stdoutBytes = 0;
    let exitStatus: number | undefined;
    call.on('data', (m: SSHStreamResponse) => {
      if (m.stdout) stdoutBytes += m.stdout.length;
      if (m.exit_status) exitStatus = m.exit_status.value ?? 0;
    });
    call.on('error', reject);
    call.on('end', () => {
      const ms = performance.now() - started;
      if (exitStatus !== 0 || stdoutBytes !== bytes) {
        reject(new Error(`grpc floor stream ended with ${stdoutBytes}/${bytes} bytes, exit ${exitStatus}`));
      } else resolve({ stdoutBytes, ms });
    });
    call.write({ repository: { storage_name: 'default', relative_path: 'bench.git' } });
    call.end();
  });
}

export async function startGrpcFloor(): Promise<GrpcFloor> {
  const script = join(projectRoot(), 'dist', 'bench', 'grpc-floor-server.js');
  const child = track(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await announcedPort(child);
  const Service = loadSshService();
  const client = new Service(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20_000,
    'grpc.keepalive_timeout_ms': 20_000,
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
  });
  const def = Service.service.SSHUploadPack;
  if (!def) throw new Error('gitaly.SSHService has no SSHUploadPack');
  if (child.pid === undefined) throw new Error('grpc floor server has no pid');
  return {
    pid: child.pid,
    stream: (bytes, timeoutMs) => floorStream(client, def as UploadPackDef, bytes, timeoutMs),
    stop: async () => {
      client.close();
      await stopChild(child, 5_000);
    },
  };
}

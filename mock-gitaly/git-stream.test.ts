import { readdirSync, readFileSync } from 'node:fs';
import { Duplex } from 'node:stream';
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import type { SSHStreamResponse } from '../lib/proto.js';
import { waitUntil } from '../test/helpers/poll.js';
import { GitFailed } from './errors.js';
import { baseEnv } from './git-command.js';
import { GitProcessRegistry } from './git-process.js';
import {
  type DuplexCall,
  type GitStreamOptions,
  MAX_RESPONSE_CHUNK,
  readFirstRequest,
  runGitStream,
} from './git-stream.js';

type Req = { stdin?: Buffer; repository?: unknown };

/**
 * A stand-in for grpc-js's server bidi call: requests are pushed in, responses collected; response
 * writes can be held to play a slow client. Like grpc-js, an emitted 'error' ends the call.
 */
class FakeCall extends Duplex {
  readonly metadata = new Metadata();
  cancelled = false;
  readonly written: SSHStreamResponse[] = [];
  error: Partial<ServiceError> | undefined;
  private holding = false;
  private held: Array<() => void> = [];
  readonly ended: Promise<void>;

  constructor() {
    super({ objectMode: true, writableHighWaterMark: 4 });
    this.on('error', (err: Partial<ServiceError>) => {
      this.error = err;
      this.end();
    });
    this.ended = new Promise((resolve) => this.on('finish', () => resolve()));
  }

  override _read(): void {}

  override _write(chunk: SSHStreamResponse, _enc: BufferEncoding, cb: () => void): void {
    this.written.push(chunk);
    if (this.holding) this.held.push(cb);
    else cb();
  }

  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const cb of this.held.splice(0)) cb();
  }

  getPeer(): string {
    return 'fake';
  }

  cancel(): void {
    this.cancelled = true;
    this.emit('cancelled');
  }

  stdout(): Buffer {
    return Buffer.concat(this.written.flatMap((r) => (r.stdout ? [r.stdout] : [])));
  }
}

const logger = createLogger('git-stream-test', 'silent');
const processes = new GitProcessRegistry();
const sh = (script: string) => ({ file: 'sh', args: ['-c', script], env: baseEnv(), cwd: '/' });

function stream(
  call: FakeCall,
  opts: Partial<GitStreamOptions<Req>> & Pick<GitStreamOptions<Req>, 'command'>,
) {
  return runGitStream<Req>({
    call: call as unknown as DuplexCall<Req>,
    logger,
    processes,
    exitStatusOnSuccess: false,
    failure: (code, stderr) => GitFailed(`exit ${code}: ${stderr}`),
    ...opts,
  });
}

/** Live (non-zombie) processes of a process group, from /proc. */
function groupAlive(pgid: number): boolean {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...
    const m = /\) (\S) \d+ (\d+)/.exec(stat);
    if (m && m[1] !== 'Z' && Number(m[2]) === pgid) return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(async () => {
  processes.killAll();
  await processes.drained(3000);
});

describe('readFirstRequest', () => {
  it('returns the first request and keeps the next ones queued', async () => {
    const call = new FakeCall();
    call.push({ repository: 'r' });
    call.push({ stdin: Buffer.from('x') });
    const first = await readFirstRequest(call as unknown as DuplexCall<Req>);
    expect(first).toEqual({ repository: 'r' });
    expect(call.isPaused()).toBe(true);
    const next = await new Promise((resolve) => {
      call.once('data', resolve);
      call.resume();
    });
    expect(next).toEqual({ stdin: Buffer.from('x') });
  });

  it('returns undefined when the client ends without a request', async () => {
    const call = new FakeCall();
    call.push(null);
    expect(await readFirstRequest(call as unknown as DuplexCall<Req>)).toBeUndefined();
  });
});

describe('runGitStream', () => {
  it('pipes stdin to the process and its stdout back, ending without exit status on success', async () => {
    const call = new FakeCall();
    const done = stream(call, { command: sh('tr a-z A-Z') });
    call.push({ stdin: Buffer.from('hello ') });
    call.push({ stdin: Buffer.from('world') });
    call.push(null);
    const result = await done;
    await call.ended;
    expect(result).toMatchObject({ outcome: 'ok', exitCode: 0, stdinBytes: 11, stdoutBytes: 11 });
    expect(call.stdout().toString()).toBe('HELLO WORLD');
    expect(call.written.some((r) => r.exit_status)).toBe(false);
    expect(call.error).toBeUndefined();
  });

  it('sends exit_status 0 when asked to (upload-archive)', async () => {
    const call = new FakeCall();
    await stream(call, { command: sh('true'), exitStatusOnSuccess: true });
    expect(call.written.at(-1)).toEqual({ exit_status: { value: 0 } });
  });

  it('sends stderr separately, then exit_status and the RPC error on failure', async () => {
    const call = new FakeCall();
    const result = await stream(call, { command: sh('echo out; echo oops >&2; exit 3') });
    await call.ended;
    expect(result.outcome).toBe('failed');
    expect(call.written).toContainEqual({ stdout: Buffer.from('out\n') });
    expect(call.written).toContainEqual({ stderr: Buffer.from('oops\n') });
    expect(call.written.at(-1)).toEqual({ exit_status: { value: 3 } });
    expect(call.error).toMatchObject({ code: status.INTERNAL, details: 'exit 3: oops\n' });
  });

  it('ends the call when the process exits although the client never closes stdin', async () => {
    const call = new FakeCall();
    const result = await stream(call, { command: sh('echo bye') });
    expect(result.outcome).toBe('ok');
    expect(call.stdout().toString()).toBe('bye\n');
  });

  it('survives stdin written after the process exited (EPIPE)', async () => {
    const call = new FakeCall();
    const done = stream(call, { command: sh('exit 0') });
    await sleep(200);
    for (let i = 0; i < 50; i++) call.push({ stdin: Buffer.alloc(64 * 1024, 1) });
    const result = await done;
    expect(result.outcome).toBe('ok');
  });

  it('stalls the process while the client does not read, then delivers everything in ≤ 128 KiB messages', async () => {
    const call = new FakeCall();
    call.hold();
    const total = 8 * 1024 * 1024;
    const done = stream(call, { command: sh(`head -c ${total} /dev/zero`) });
    await sleep(700);
    // A few messages in flight, not 8 MiB buffered in memory.
    expect(call.written.length).toBeLessThan(12);
    expect(processes.size).toBe(1);
    const drain = setInterval(() => call.release(), 5);
    const result = await done;
    clearInterval(drain);
    expect(result.outcome).toBe('ok');
    expect(call.stdout().length).toBe(total);
    expect(Math.max(...call.written.map((r) => r.stdout?.length ?? 0))).toBeLessThanOrEqual(
      MAX_RESPONSE_CHUNK,
    );
  });

  it('pauses the call while the process does not read its stdin', async () => {
    const call = new FakeCall();
    const done = stream(call, { command: sh('sleep 1; wc -c') });
    for (let i = 0; i < 64; i++) call.push({ stdin: Buffer.alloc(64 * 1024, 1) });
    call.push(null);
    await sleep(300);
    expect(call.isPaused()).toBe(true);
    const result = await done;
    expect(call.stdout().toString().trim()).toBe(String(64 * 64 * 1024));
    expect(result.stdinBytes).toBe(64 * 64 * 1024);
  });

  it('kills the whole process group when the client cancels, even if it ignores SIGTERM', async () => {
    const call = new FakeCall();
    const done = stream(call, { command: sh('trap "" TERM; sleep 30 & echo started; wait') });
    while (!call.stdout().toString().includes('started')) await sleep(20);
    const [proc] = [...(processes as unknown as { live: Set<{ child: { pid: number } }> }).live];
    const pid = proc?.child.pid as number;
    expect(groupAlive(pid)).toBe(true);
    call.cancel();
    const result = await done;
    expect(result.outcome).toBe('cancelled');
    await waitUntil(() => !groupAlive(pid), 300, 'the process group to be gone');
    expect(groupAlive(pid)).toBe(false);
    expect(call.error).toBeUndefined();
  });

  it('kills the process and answers DEADLINE_EXCEEDED when negotiation does not end in time', async () => {
    const call = new FakeCall();
    const done = stream(call, { command: sh('cat'), negotiation: { until: 'done', timeoutMs: 200 } });
    call.push({ stdin: Buffer.from('0032want 0000000000000000000000000000000000000000\n') });
    const result = await done;
    await call.ended;
    expect(result.outcome).toBe('negotiation-timeout');
    expect(call.written.at(-1)?.exit_status).toBeDefined();
    expect(call.error).toMatchObject({ code: status.DEADLINE_EXCEEDED, details: 'waiting for negotiation' });
  });

  it('answers INTERNAL when the program cannot be started', async () => {
    const call = new FakeCall();
    const result = await stream(call, { command: { ...sh(''), file: '/nonexistent/git' } });
    await call.ended;
    expect(result.outcome).toBe('spawn-failed');
    expect(call.error).toMatchObject({ code: status.INTERNAL });
    expect(processes.size).toBe(0);
  });
});

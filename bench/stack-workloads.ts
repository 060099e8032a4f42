import type { ChildProcess } from 'node:child_process';
import { jwtKey, signShellJwt } from '../lib/jwt.js';
import { PktLineReader } from '../lib/pktline.js';
import { readSecretFile } from '../lib/secrets.js';
import { uploadPack, uploadPackBody } from './bridge-client.js';
import { drain } from './drain.js';
import { sshCommandLine } from './openssh.js';
import { childPids, exited, RssSampler, rssKiB, sleep, track, waitExit } from './proc.js';
import type { BenchStack } from './stack-runner.js';
import { median, mibPerSecond } from './stats.js';

/** Workloads that need the running stack: memory (idle, idle tunnels, slow reader); the throughput runs are in throughput-runs.ts. */

/** Median of a few RSS samples (KiB), taken `gapMs` apart, to smooth out GC noise. */
export async function steadyRss(pid: number, samples = 5, gapMs = 200): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const kib = rssKiB(pid);
    if (kib === undefined) throw new Error(`process ${pid} is gone`);
    xs.push(kib);
    if (i < samples - 1) await sleep(gapMs);
  }
  return median(xs) ?? 0;
}

function sshArgs(stack: BenchStack, username: string): string[] {
  const user = stack.json.users.find((u) => u.username === username);
  if (!user) throw new Error(`stack.json has no user ${username}`);
  const line = sshCommandLine(user.privateKey, stack.json.knownHosts).split(' ').slice(1);
  return [...line, '-p', String(stack.sshPort), 'git@127.0.0.1'];
}

/** Resolves once the pkt-line stream on `child`'s stdout reached its first flush (the ref advertisement). */
function advertisement(child: ChildProcess, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const reader = new PktLineReader();
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-2048);
    });
    const timer = setTimeout(
      () => reject(new Error(`no ref advertisement within ${ms} ms: ${stderr.trim()}`)),
      ms,
    );
    const onData = (c: Buffer) => {
      try {
        if (reader.push(c).some((p) => p.kind === 'flush')) {
          clearTimeout(timer);
          child.stdout?.off('data', onData);
          child.stdout?.resume();
          resolve();
        }
      } catch (err) {
        clearTimeout(timer);
        reject(err);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ssh exited (${code}) before the advertisement: ${stderr.trim()}`));
    });
  });
}

export interface IdleMemoryResult {
  idleKiB: { router: number; bridge: number };
  tunnels: number;
  withTunnelsKiB: { router: number; bridge: number };
  perTunnelKiB: { router: number; bridge: number };
  afterCloseKiB: { router: number; bridge: number };
  /** git processes of the cell's Gitaly while the tunnels were open (one upload-pack each). */
  gitProcessesOpen: number;
}

/**
 * RSS of router and bridge idle, then with `count` idle tunnels: `ssh … git-upload-pack` sessions
 * through the router that stop after the ref advertisement. All are closed (flush, EOF) and checked
 * gone afterwards, with their git processes.
 */
export async function idleMemory(
  stack: BenchStack,
  project: string,
  count: number,
  log: (line: string) => void,
): Promise<IdleMemoryResult> {
  const router = stack.pid('router');
  const bridge = stack.pid('bridge-cell_us0');
  const gitaly = stack.pid('gitaly-cell_us0');
  const idleKiB = { router: await steadyRss(router), bridge: await steadyRss(bridge) };
  const gitBefore = childPids(gitaly).length;
  const args = [...sshArgs(stack, 'bob'), `git-upload-pack '${project}.git'`];
  const sessions: ChildProcess[] = [];
  try {
    for (let i = 0; i < count; i += 10) {
      const batch = Array.from({ length: Math.min(10, count - i) }, () => {
        const child = track('ssh', args, { stdio: ['pipe', 'pipe', 'pipe'] });
        sessions.push(child);
        return advertisement(child, 60_000);
      });
      await Promise.all(batch);
    }
    log(`${count} idle tunnels open`);
    await sleep(1000);
    const withTunnelsKiB = { router: await steadyRss(router), bridge: await steadyRss(bridge) };
    const gitProcessesOpen = childPids(gitaly).length - gitBefore;
    if (gitProcessesOpen < count) {
      throw new Error(`only ${gitProcessesOpen} git processes for ${count} open tunnels`);
    }
    // Close: a flush tells upload-pack the client wants nothing, then EOF.
    for (const s of sessions) s.stdin?.end('0000');
    const gone = await Promise.all(sessions.map((s) => waitExit(s, 15_000)));
    const stuck = gone.filter((g) => !g).length;
    if (stuck > 0) throw new Error(`${stuck} ssh sessions did not end after the client closed them`);
    const deadline = Date.now() + 15_000;
    while (childPids(gitaly).length > gitBefore && Date.now() < deadline) await sleep(100);
    const leftover = childPids(gitaly).length - gitBefore;
    if (leftover > 0)
      throw new Error(`${leftover} git processes still running 15 s after the tunnels closed`);
    await sleep(500);
    const afterCloseKiB = { router: await steadyRss(router), bridge: await steadyRss(bridge) };
    return {
      idleKiB,
      tunnels: count,
      withTunnelsKiB,
      perTunnelKiB: {
        router: (withTunnelsKiB.router - idleKiB.router) / count,
        bridge: (withTunnelsKiB.bridge - idleKiB.bridge) / count,
      },
      afterCloseKiB,
      gitProcessesOpen,
    };
  } finally {
    for (const s of sessions) if (!exited(s)) s.kill('SIGKILL');
  }
}

export async function shellJwt(stack: BenchStack, glId: string): Promise<string> {
  return signShellJwt(jwtKey(readSecretFile(stack.json.secrets.shell, 'shell secret')), glId);
}

export interface SlowReadResult {
  bytes: number;
  ms: number;
  rateMiBps: number;
  /** Peak RSS (KiB) of each sampled process during the transfer. */
  peakKiB: Record<string, number>;
  /** RSS (KiB) of the same processes just before. */
  beforeKiB: Record<string, number>;
}

export interface SlowReaderTarget {
  project: string;
  cell: string;
  /** User allowed to read the project, for the SSH variant and the JWT. */
  username: string;
  head: string;
  /** The repository's pack size: the response must carry at least this much. */
  packBytes: number;
}

function beforeRss(pids: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, rssKiB(p) ?? 0]));
}

/** A client reading the whole upload-pack response of a big repository slowly, straight from the bridge (HTTP/2). */
export async function slowReadBridge(
  stack: BenchStack,
  t: SlowReaderTarget,
  rate: number,
  timeoutMs: number,
): Promise<SlowReadResult> {
  const user = stack.json.users.find((u) => u.username === t.username);
  if (!user) throw new Error(`stack.json has no user ${t.username}`);
  const pids = { bridge: stack.pid(`bridge-${t.cell}`), gitaly: stack.pid(`gitaly-${t.cell}`) };
  const before = beforeRss(pids);
  const sampler = new RssSampler(pids);
  try {
    const r = await uploadPack('h2', {
      bridgeUrl: stack.bridgeUrl(t.cell),
      project: t.project,
      wants: [t.head],
      jwt: await shellJwt(stack, `user-${user.id}`),
      timeoutMs,
      rateBytesPerSecond: rate,
    });
    if (r.stdoutBytes < t.packBytes)
      throw new Error(`only ${r.stdoutBytes} bytes for a ${t.packBytes}-byte pack`);
    return {
      bytes: r.stdoutBytes,
      ms: r.ms,
      rateMiBps: mibPerSecond(r.stdoutBytes, r.ms) ?? 0,
      peakKiB: sampler.stop(),
      beforeKiB: before,
    };
  } finally {
    sampler.stop();
  }
}

/** The same slow read through the router: `ssh … git-upload-pack`, its stdout consumed at `rate`. */
export async function slowReadRouter(
  stack: BenchStack,
  t: SlowReaderTarget,
  rate: number,
  timeoutMs: number,
): Promise<SlowReadResult> {
  const pids = {
    router: stack.pid('router'),
    bridge: stack.pid(`bridge-${t.cell}`),
    gitaly: stack.pid(`gitaly-${t.cell}`),
  };
  const before = beforeRss(pids);
  const sampler = new RssSampler(pids);
  const child = track('ssh', [...sshArgs(stack, t.username), `git-upload-pack '${t.project}.git'`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-2048);
  });
  try {
    child.stdin?.on('error', () => undefined);
    child.stdin?.write(uploadPackBody([t.head]));
    const stdout = child.stdout;
    if (!stdout) throw new Error('ssh has no stdout');
    const r = await drain(stdout, { rateBytesPerSecond: rate, timeoutMs, onChunk: () => undefined });
    child.stdin?.end();
    if (!(await waitExit(child, 15_000))) throw new Error('ssh did not exit after the response');
    if (child.exitCode !== 0) throw new Error(`ssh exit ${child.exitCode}: ${stderr.trim()}`);
    if (r.bytes < t.packBytes) throw new Error(`only ${r.bytes} bytes for a ${t.packBytes}-byte pack`);
    return {
      bytes: r.bytes,
      ms: r.ms,
      rateMiBps: mibPerSecond(r.bytes, r.ms) ?? 0,
      peakKiB: sampler.stop(),
      beforeKiB: before,
    };
  } finally {
    sampler.stop();
    if (!exited(child)) child.kill('SIGKILL');
  }
}

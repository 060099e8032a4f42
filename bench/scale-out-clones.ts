/**
 * @file Bursts of concurrent small clones through HAProxy, each client from its own loopback
 * address (`ssh -b 127.<phase>.x.y`), so the address that reaches `check_ip` names the clone; and
 * the check of the world's journal that it did.
 */
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { JournalEntry } from '../lib/contracts/world.js';
import { sshCommandLine } from './openssh.js';
import { describeFailure, run, sleep } from './proc.js';

/** A distinct loopback address per clone of a phase: 127.<phase>.<i / 250>.<i % 250 + 1>. */
export function clientAddress(phase: number, i: number): string {
  return `127.${phase}.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

export interface BurstSpec {
  /** `host:port` of the HAProxy frontend. */
  frontend: string;
  project: string;
  /** The commit `main` must be at in every clone. */
  head: string;
  privateKey: string;
  knownHosts: string;
  baseEnv: NodeJS.ProcessEnv;
  /** Where the clones go (removed afterwards). */
  dir: string;
  timeoutMs: number;
}

export interface CloneOutcome {
  address: string;
  ok: boolean;
  ms: number;
  /** git's (and ssh's) standard error, when it failed. */
  error?: string;
}

/** One clone from `address`: exit 0 and `main` at the expected commit. */
async function cloneFrom(spec: BurstSpec, address: string, dest: string): Promise<CloneOutcome> {
  const [host, port] = spec.frontend.split(':');
  const url = `ssh://git@${host}:${port}/${spec.project}.git`;
  const env = {
    ...spec.baseEnv,
    GIT_SSH_COMMAND: `${sshCommandLine(spec.privateKey, spec.knownHosts)} -b ${address}`,
  };
  const r = await run('git', ['clone', '-q', '--bare', url, dest], { env, timeoutMs: spec.timeoutMs });
  if (r.code !== 0) return { address, ok: false, ms: r.ms, error: describeFailure(r) };
  const head = await run('git', ['--git-dir', dest, 'rev-parse', 'refs/heads/main'], {
    timeoutMs: 30_000,
    keepStdout: true,
  });
  await rm(dest, { recursive: true, force: true });
  const got = head.stdout.trim();
  if (got !== spec.head)
    return { address, ok: false, ms: r.ms, error: `clone has main at ${got}, expected ${spec.head}` };
  return { address, ok: true, ms: r.ms };
}

/** `count` clones started at once from the addresses of `phase`; `onDone` after each one ends. */
export async function cloneBurst(
  spec: BurstSpec,
  phase: number,
  count: number,
  onDone?: (finished: number) => void,
): Promise<CloneOutcome[]> {
  let finished = 0;
  const outcomes = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const address = clientAddress(phase, i);
      const o = await cloneFrom(spec, address, join(spec.dir, `p${phase}-c${i}`));
      onDone?.(++finished);
      return o;
    }),
  );
  await rm(spec.dir, { recursive: true, force: true });
  return outcomes;
}

export interface CheckIpResult {
  /** Successful clones whose own address reached `/api/v4/internal/allowed` as `check_ip`. */
  matched: number;
  /** Successful clones looked for. */
  clones: number;
  /** `check_ip` values equal to the balancer's own address since the mark (should be none). */
  balancerAddress: number;
  /** A few of the `check_ip` values seen, for the report. */
  sample: string[];
}

/** The journal's size now: where the entries of what follows begin. */
export async function journalMark(journal: string): Promise<number> {
  return (await stat(journal)).size;
}

async function allowedCheckIps(journal: string, fromByte: number): Promise<string[]> {
  const text = (await readFile(journal)).subarray(fromByte).toString('utf8');
  const ips: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('/api/v4/internal/allowed')) continue;
    const e = JSON.parse(line) as JournalEntry;
    const ip = e.fields?.check_ip;
    if (e.endpoint.endsWith('/api/v4/internal/allowed') && typeof ip === 'string') ips.push(ip);
  }
  return ips;
}

/**
 * Whether each successful clone's address reached the cell's `/allowed` as `check_ip` (the
 * journal is written by the supervisor a moment after the request: polled for up to 10 s).
 */
export async function checkIps(
  journal: string,
  outcomes: readonly CloneOutcome[],
  balancer: string,
  fromByte: number,
): Promise<CheckIpResult> {
  const wanted = outcomes.filter((o) => o.ok).map((o) => o.address);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ips = await allowedCheckIps(journal, fromByte);
    const seen = new Set(ips);
    const matched = wanted.filter((a) => seen.has(a)).length;
    if (matched === wanted.length || Date.now() > deadline) {
      const prefixes = new Set(wanted.map((a) => a.split('.').slice(0, 2).join('.')));
      return {
        matched,
        clones: wanted.length,
        balancerAddress: ips.filter((ip) => ip === balancer).length,
        sample: ips.filter((ip) => prefixes.has(ip.split('.').slice(0, 2).join('.'))).slice(0, 3),
      };
    }
    await sleep(250);
  }
}

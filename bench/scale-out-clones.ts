/**
 * @file Bursts of concurrent small clones through HAProxy, each client from its own loopback
 * address (`ssh -b 127.<phase>.x.y`), so the address that reaches `check_ip` names the clone; and
 * the check of the world's journal that it did.
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JournalEntry } from '../lib/contracts/world.js';
import { sshCommandLine } from './openssh.js';
import { describeFailure, failureText, run, sleep } from './proc.js';

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

/**
 * What a failed clone ran into, in a few words, from git's and ssh's standard error: the counts by
 * cause tell a balancer that closed connections from a router that refused them.
 */
export function failureCause(error: string): string {
  if (/kex_exchange_identification|Connection closed by .* port|ssh_exchange_identification/.test(error))
    return 'connection closed before the SSH banner';
  if (/Permission denied \(publickey\)/.test(error)) return 'Permission denied (publickey)';
  const refusal = /ERROR: ([^|]+?)\s*\|/.exec(error);
  if (refusal?.[1]) return `ERROR: ${refusal[1]}`;
  if (/closed by remote host/.test(error)) return 'connection closed during the clone';
  if (error.startsWith('timed out')) return 'timed out';
  if (error.startsWith('clone has main at')) return 'wrong commit';
  return error.slice(0, 80);
}

/** Failed clones counted by `failureCause`, the most frequent first. */
export function failureCauses(outcomes: readonly CloneOutcome[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    if (o.ok) continue;
    const cause = failureCause(o.error ?? 'unknown');
    counts.set(cause, (counts.get(cause) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
}

/**
 * The launcher of a burst: one bash process forks every clone (a fork of bash takes well under a
 * millisecond; a spawn from the benchmark's Node process took 18 ms on an idle machine and holds its
 * event loop, so 1000 of them trickled in over half a minute and more). Each clone records
 * `<index> <exit> <start> <end> <main>` in `results` (one short line, appended atomically) and its
 * standard error in `<index>.err`.
 */
const LAUNCHER = `#!/bin/bash
# usage: launch.sh <dir> <url> <timeout seconds>; GIT_SSH_BASE is the ssh command line
dir=$1 url=$2 limit=$3
mapfile -t addresses < "$dir/addresses"
for i in "\${!addresses[@]}"; do
  (
    start=$EPOCHREALTIME
    GIT_SSH_COMMAND="$GIT_SSH_BASE -b \${addresses[$i]}" timeout -s KILL "$limit" \\
      git clone -q --bare "$url" "$dir/c$i" 2> "$dir/$i.err"
    code=$?
    end=$EPOCHREALTIME
    head=-
    if [ "$code" = 0 ]; then head=$(git --git-dir "$dir/c$i" rev-parse refs/heads/main); fi
    rm -rf "$dir/c$i"
    echo "$i $code $start $end $head" >> "$dir/results"
  ) &
done
wait
`;

/** Exit status of `timeout -s KILL` when it killed the clone. */
const KILLED_BY_TIMEOUT = 137;

async function outcomeOf(dir: string, address: string, line: string, head: string): Promise<CloneOutcome> {
  const [index, code, start, end, got] = line.split(' ');
  const ms = (Number(end) - Number(start)) * 1000;
  if (code === '0' && got === head) return { address, ok: true, ms };
  if (code === '0') return { address, ok: false, ms, error: `clone has main at ${got}, expected ${head}` };
  const stderr = await readFile(join(dir, `${index}.err`), 'utf8').catch(() => '');
  const why = code === String(KILLED_BY_TIMEOUT) ? 'timed out' : `exit ${code}`;
  return { address, ok: false, ms, error: failureText(why, stderr) };
}

/** `count` clones started at once from the addresses of `phase` (`clientAddress`). */
export async function cloneBurst(spec: BurstSpec, phase: number, count: number): Promise<CloneOutcome[]> {
  const dir = join(spec.dir, `burst-${phase}`);
  await mkdir(dir, { recursive: true });
  const addresses = Array.from({ length: count }, (_, i) => clientAddress(phase, i));
  await writeFile(join(dir, 'addresses'), `${addresses.join('\n')}\n`);
  await writeFile(join(dir, 'launch.sh'), LAUNCHER, { mode: 0o755 });
  const [host, port] = spec.frontend.split(':');
  const url = `ssh://git@${host}:${port}/${spec.project}.git`;
  const limit = String(Math.ceil(spec.timeoutMs / 1000));
  // LC_ALL=C: the launcher's $EPOCHREALTIME with a decimal point.
  const env = {
    ...spec.baseEnv,
    LC_ALL: 'C',
    GIT_SSH_BASE: sshCommandLine(spec.privateKey, spec.knownHosts),
  };
  const r = await run('bash', [join(dir, 'launch.sh'), dir, url, limit], {
    env,
    timeoutMs: spec.timeoutMs + 60_000,
  });
  if (r.code !== 0) throw new Error(`the clone launcher failed: ${describeFailure(r)}`);
  const lines = (await readFile(join(dir, 'results'), 'utf8')).trim().split('\n');
  const byIndex = new Map(lines.map((l) => [Number(l.split(' ')[0]), l]));
  const outcomes = await Promise.all(
    addresses.map((address, i) => {
      const line = byIndex.get(i);
      if (!line) return { address, ok: false, ms: 0, error: 'the launcher recorded no result' };
      return outcomeOf(dir, address, line, spec.head);
    }),
  );
  await rm(dir, { recursive: true, force: true });
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

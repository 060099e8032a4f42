import { CONTENDER_LABELS, type GitContenderId, type LargeCloneResult } from './git-workloads.js';
import { type Outcome, okValue } from './outcome.js';
import { defaultCipher } from './report-values.js';
import type { BenchResults } from './results.js';

/** Server CPU of the large clone by process, git's own processes apart from the service that ran them. */

const GIB = 1024 ** 3;

/** Process ids of the CPU counters (contenders.ts, openssh.ts, nginx.ts), in table order. */
export const PROCESS_LABELS: Record<string, string> = {
  sshd: 'sshd (own: listener, connection processes, forced-command shell)',
  'sshd-git': 'git under sshd (upload-pack, pack-objects)',
  router: 'router',
  bridge: 'bridge',
  gitaly: 'mock Gitaly (own)',
  'gitaly-git': 'git under mock Gitaly (upload-pack, pack-objects)',
  rails: 'mock cell (Rails)',
  nginx: 'nginx (master and workers)',
  fcgiwrap: 'fcgiwrap (own)',
  'fcgiwrap-git': 'git under fcgiwrap (http-backend, upload-pack, pack-objects)',
};
const GIT_PROCESSES = new Set(['sshd-git', 'gitaly-git', 'fcgiwrap-git']);
const SERVERS: readonly GitContenderId[] = ['openssh', 'cells', 'nginx', 'cells-http'];

/** Mean CPU seconds per large clone of each server process of a contender. */
export function largeCloneCpu(r: BenchResults, id: GitContenderId): Record<string, number> | undefined {
  return meanCpu(r.largeClone?.[id]);
}

/** Mean CPU seconds per clone of each server process of repeated clones. */
export function meanCpu(o: Outcome<LargeCloneResult> | undefined): Record<string, number> | undefined {
  const v = okValue(o);
  if (!v || v.cpu.length === 0) return undefined;
  const out: Record<string, number> = {};
  for (const use of v.cpu) {
    for (const [k, s] of Object.entries(use.processes)) out[k] = (out[k] ?? 0) + s / v.cpu.length;
  }
  return out;
}

/** CPU seconds per GiB of the large repository's pack, from seconds per clone. */
export function perGiBServed(r: BenchResults, secondsPerClone: number | undefined): number | undefined {
  return secondsPerClone === undefined ? undefined : (secondsPerClone / r.repos.large.packBytes) * GIB;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

function cells(r: BenchResults, seconds: number | undefined): string[] {
  if (seconds === undefined) return ['–', '–'];
  return [seconds.toFixed(2), (perGiBServed(r, seconds) ?? 0).toFixed(2)];
}

/** The markdown table (empty when no server contender measured the large clone). */
export function renderServerCpu(r: BenchResults): string[] {
  const cpu = SERVERS.map((id) => largeCloneCpu(r, id));
  if (cpu.every((c) => c === undefined)) return [];
  const names = Object.keys(PROCESS_LABELS).filter((n) => cpu.some((c) => c?.[n] !== undefined));
  const total = (c: Record<string, number> | undefined, keep: (n: string) => boolean) =>
    c && sum(names.filter(keep).map((n) => c[n] ?? 0));
  const rows: Array<[string, Array<number | undefined>]> = [
    ...names.map((n): [string, Array<number | undefined>] => [
      PROCESS_LABELS[n] ?? n,
      cpu.map((c) => c?.[n]),
    ]),
    ['**all server processes**', cpu.map((c) => total(c, () => true))],
    ['**server processes without git**', cpu.map((c) => total(c, (n) => !GIT_PROCESSES.has(n)))],
  ];
  const header = [
    'process',
    ...SERVERS.flatMap((id) => [`${CONTENDER_LABELS[id]}: CPU s per clone`, 'CPU s per GiB']),
  ];
  const cipher = defaultCipher(r);
  return [
    `**Server CPU by process, large clone** (${cipher ? `SSH ${cipher}; ` : ''}mean of ${r.settings.largeCloneRuns}; per clone and per GiB of the ${(r.repos.large.packBytes / 1024 ** 2).toFixed(0)} MiB pack served; git's processes counted apart from the service that ran them)`,
    '',
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map(([label, values]) => `| ${[label, ...values.flatMap((v) => cells(r, v))].join(' | ')} |`),
    ...aesGcmCpu(r),
  ];
}

/** The SSH services' CPU per GiB of the AES-GCM large clones, and the router's against sshd's own. */
function aesGcmCpu(r: BenchResults): string[] {
  const cells = meanCpu(r.largeCloneAesGcm?.cells);
  const sshd = meanCpu(r.largeCloneAesGcm?.openssh)?.sshd;
  if (!cells && sshd === undefined) return [];
  const perGiB = (s: number | undefined) =>
    s === undefined ? '–' : `${(perGiBServed(r, s) ?? 0).toFixed(2)} s`;
  const ratio = cells?.router !== undefined && sshd ? `${(cells.router / sshd).toFixed(2)}×` : '–';
  return [
    '',
    `With AES-GCM (\`-c aes128-gcm@openssh.com\`), CPU per GiB served: router ${perGiB(cells?.router)}, bridge ${perGiB(cells?.bridge)}, the OpenSSH server’s own processes ${perGiB(sshd)}; router / OpenSSH server ${ratio}.`,
  ];
}

import {
  CONTENDER_LABELS,
  GIT_CONTENDERS,
  type GitContenderId,
  type LargeCloneResult,
} from './git-workloads.js';
import { type Outcome, okValue } from './outcome.js';
import { cell, fmt, type MarkdownLines, millis, seconds, size, times } from './report-format.js';
import { defaultCipher, machineCpu } from './report-values.js';
import type { BenchResults } from './results.js';
import { AES_GCM } from './ssh-ciphers.js';
import { ratio } from './stats.js';

/** The report's git table: every git contender by workload, with the cells path's ratios. */

type GitRow = (
  label: string,
  pick: (id: GitContenderId) => number | undefined,
  show: (x: number | undefined) => string,
  outcome: (id: GitContenderId) => Outcome<unknown> | undefined,
  ratios?: boolean,
) => void;

/** One row: a value per contender, then cells / OpenSSH, cells / direct, cells HTTP / nginx. */
function gitRowOf(md: MarkdownLines): GitRow {
  return (label, pick, show, outcome, ratios = true) => {
    const values = GIT_CONTENDERS.map((id) => cell(outcome(id), () => show(pick(id))));
    const extra = ratios
      ? [
          times(ratio(pick('cells'), pick('openssh'))),
          times(ratio(pick('cells'), pick('direct'))),
          times(ratio(pick('cells-http'), pick('nginx'))),
        ]
      : ['', '', ''];
    md.row([label, ...values, ...extra]);
  };
}

/** OpenSSH and the cells path with `-c aes128-gcm@openssh.com`: their columns and cells / OpenSSH. */
function aesGcmRows(r: BenchResults, md: MarkdownLines): void {
  const gcm = r.largeCloneAesGcm;
  if (!gcm) return;
  const of = (id: GitContenderId) => (id === 'openssh' || id === 'cells' ? gcm[id] : undefined);
  const gcmRow = (label: string, pick: (o: Outcome<LargeCloneResult> | undefined) => number | undefined) => {
    const values = GIT_CONTENDERS.map((id) =>
      id === 'openssh' || id === 'cells' ? cell(of(id), () => seconds(pick(of(id)))) : '',
    );
    md.row([label, ...values, times(ratio(pick(gcm.cells), pick(gcm.openssh))), '', '']);
  };
  const runs = r.settings.largeCloneRuns;
  gcmRow(
    `Large clone (SSH AES-GCM: \`-c ${AES_GCM}\`), wall time (median of ${runs})`,
    (o) => okValue(o)?.medianMs,
  );
  gcmRow('Large clone (SSH AES-GCM), machine CPU per clone', (o) => (machineCpu(o) ?? Number.NaN) * 1000);
}

/** The large clone (then with AES-GCM) and the realistic-history clone: wall time and machine CPU per clone. */
function cloneRows(r: BenchResults, md: MarkdownLines, gitRow: GitRow): void {
  const h = r.repos.history;
  const cipher = defaultCipher(r);
  const clones = [
    [`Large clone${cipher ? ` (SSH ${cipher})` : ''}`, r.largeClone],
    [
      `Realistic-history clone (${h ? `${h.commits} commits, ${size(h.packBytes)}` : 'not generated'})`,
      r.historyClone,
    ],
  ] as const;
  for (const [i, [label, results]] of clones.entries()) {
    const of = (id: GitContenderId) => results?.[id];
    const runs = r.settings.largeCloneRuns;
    gitRow(`${label}, wall time (median of ${runs})`, (id) => okValue(of(id))?.medianMs, seconds, of);
    gitRow(`${label}, machine CPU per clone`, (id) => (machineCpu(of(id)) ?? Number.NaN) * 1000, seconds, of);
    if (i === 0) aesGcmRows(r, md);
  }
}

/** Sequential small clones (percentiles, CPU), then each concurrency level. */
function smallCloneRows(r: BenchResults, gitRow: GitRow): void {
  const sc = (id: GitContenderId) => r.smallClone?.[id];
  for (const p of ['p50', 'p95', 'p99'] as const) {
    gitRow(
      `Small clone ${p} (${r.settings.sequentialClones} sequential)`,
      (id) => okValue(sc(id))?.[p],
      millis,
      sc,
    );
  }
  gitRow(
    'Small clone, machine CPU per clone',
    (id) => (okValue(sc(id))?.cpuPerClone ?? Number.NaN) * 1000,
    millis,
    sc,
  );
  for (const level of r.settings.concurrency) {
    const res = r.concurrency?.find((c) => c.level === level)?.results;
    const co = (id: GitContenderId) => res?.[id];
    gitRow(
      `${level} concurrent clones: errors`,
      (id) => okValue(co(id))?.errors,
      (x) => fmt(x, 0),
      co,
      false,
    );
    gitRow(`${level} concurrent clones: p99`, (id) => okValue(co(id))?.latency?.p99, millis, co);
    gitRow(
      `${level} concurrent clones: clones/s`,
      (id) => okValue(co(id))?.clonesPerSecond,
      (x) => fmt(x, 1),
      co,
    );
  }
}

export function renderGitTable(r: BenchResults, md: MarkdownLines): void {
  md.push(
    '**Git over five paths** (`git clone --bare` / `git push`, same client, same bare repositories; SSH and HTTP)',
    '',
  );
  md.head([
    'workload',
    ...GIT_CONTENDERS.map((c) => CONTENDER_LABELS[c]),
    'cells / OpenSSH',
    'cells / direct',
    'cells HTTP / nginx',
  ]);
  const gitRow = gitRowOf(md);
  cloneRows(r, md, gitRow);
  smallCloneRows(r, gitRow);
  const pu = (id: GitContenderId) => r.push?.[id];
  gitRow(
    `Push ${size(r.repos.push.files * r.repos.push.fileBytes)} of new objects (median of ${r.settings.pushRuns})`,
    (id) => okValue(pu(id))?.medianMs,
    seconds,
    pu,
  );
}

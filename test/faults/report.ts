import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../lib/proto.js';
import { EXIT_BOUND_MS, type Fault, KNOWN_GAPS } from './faults.js';
import type { Operation } from './operations.js';

/** One attempt of one cell: an operation hit by a fault. */
export interface Attempt {
  op: string;
  fault: string;
  repeat: number;
  /** Offset of a mid-transfer fault from the operation's start, ms (undefined for `before` faults). */
  offsetMs?: number;
  /** False when the operation had ended before a mid-transfer fault could land. */
  landed: boolean;
  /** How long the undisturbed run after the fault took (ms), when it succeeded. */
  againMs?: number;
  exitCode: number;
  /** From the fault taking effect to git's exit. */
  exitMs: number;
  /** The user-facing line git printed (the `ERROR:` / `fatal:` line). */
  message: string;
  notes: string[];
  /** Every assertion that did not hold; empty when the cell survived. */
  failures: string[];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function cell(attempts: Attempt[]): string {
  if (attempts.length === 0) return 'n/a';
  const landed = attempts.filter((a) => a.landed);
  const ok = landed.filter((a) => a.failures.length === 0).length;
  const worst = Math.max(0, ...landed.map((a) => a.exitMs));
  const failed = landed.filter((a) => a.exitCode !== 0).length;
  const outcome = failed === landed.length ? 'failed' : failed === 0 ? 'served' : `${failed} failed`;
  const missed = attempts.length - landed.length;
  const mark = ok === landed.length ? '✓' : '✗';
  return `${mark} ${ok}/${landed.length} ${outcome}, ≤ ${seconds(worst)}${missed ? ` (${missed} ended before the fault)` : ''}`;
}

/** The matrix as Markdown: one row per fault, one column per operation, and every failure below. */
export function renderMatrix(ops: Operation[], faults: Fault[], attempts: Attempt[], meta: string[]): string {
  const head = `| fault | ${ops.map((o) => o.id).join(' | ')} |`;
  const rule = `| --- | ${ops.map(() => '---').join(' | ')} |`;
  const rows = faults.map((f) => {
    const cells = ops.map((o) => cell(attempts.filter((a) => a.op === o.id && a.fault === f.id)));
    return `| ${f.id}: ${f.label} | ${cells.join(' | ')} |`;
  });
  const landed = attempts.filter((a) => a.landed);
  const survived = landed.filter((a) => a.failures.length === 0).length;
  const failures = landed.filter((a) => a.failures.length > 0);
  const messages = new Map<string, Set<string>>();
  for (const a of landed) {
    if (a.exitCode === 0 || a.message === '') continue;
    const key = a.fault;
    messages.set(key, (messages.get(key) ?? new Set()).add(a.message));
  }
  return [
    '# Fault matrix',
    '',
    ...meta,
    '',
    `**${survived} of ${landed.length} injected faults survived** (${attempts.length - landed.length} attempts ended before their fault landed and are not counted).`,
    '',
    'Each cell: survived / injected, whether git failed or was served, and the longest time from the fault to git’s exit.',
    `Survived means: git exited within ${seconds(EXIT_BOUND_MS)} of the fault with a message a user understands (or succeeded`,
    'with complete data), no git or other process of the operation was left on the server side 2 s after it,',
    'an interrupted push changed no ref and left no quarantine, and the same operation run again succeeded.',
    '',
    head,
    rule,
    ...rows,
    '',
    '## What git printed',
    '',
    ...[...messages].map(([fault, set]) => `- ${fault}: ${[...set].map((m) => `\`${m}\``).join('; ')}`),
    '',
    '## Failures',
    '',
    ...(KNOWN_GAPS.length === 0
      ? ['Known gaps: none.']
      : [
          'Known gaps (reported here, not failing the run):',
          ...KNOWN_GAPS.map((g) => `- ${g.op} × ${g.fault}: ${g.why}.`),
        ]),
    '',
    ...(failures.length === 0
      ? ['None.']
      : failures.map((a) => `- ${a.op} × ${a.fault} #${a.repeat}: ${a.failures.join('; ')}`)),
    '',
  ].join('\n');
}

/** Writes `test/results/<name>` (or FAULTS_RESULTS_DIR) and returns its path. */
export function writeResult(name: string, text: string): string {
  const dir = process.env.FAULTS_RESULTS_DIR ?? join(projectRoot(), 'test', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

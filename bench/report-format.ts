import type { Outcome } from './outcome.js';
import { MIB } from './stats.js';

/** How the report formats one value: seconds, milliseconds, MiB, ratios, sizes, a failed cell. */

export function fmt(x: number | undefined, digits = 2, unit = ''): string {
  return x === undefined || !Number.isFinite(x) ? '–' : `${x.toFixed(digits)}${unit}`;
}

export const times = (x: number | undefined) => fmt(x, 2, '×');
export const seconds = (ms: number | undefined) => fmt(ms === undefined ? undefined : ms / 1000, 2, ' s');
export const millis = (ms: number | undefined) => fmt(ms, 0, ' ms');
export const mib = (kib: number | undefined) => fmt(kib === undefined ? undefined : kib / 1024, 1, ' MiB');
export const size = (bytes: number) =>
  bytes >= 1024 * MIB ? `${(bytes / 1024 / MIB).toFixed(2)} GiB` : `${(bytes / MIB).toFixed(1)} MiB`;

/** A table cell of a measurement: `not run`, **FAILED**, or the value shown. */
export function cell<T>(o: Outcome<T> | undefined, show: (v: T) => string): string {
  if (!o) return 'not run';
  return o.ok ? show(o.value) : '**FAILED**';
}

/** Collects markdown lines; `row` and `head` write table rows. */
export class MarkdownLines {
  readonly lines: string[] = [];

  push(...lines: string[]): void {
    this.lines.push(...lines);
  }

  row(cells: string[]): void {
    this.lines.push(`| ${cells.join(' | ')} |`);
  }

  /** A header row and its `---` separator. */
  head(cells: string[]): void {
    this.row(cells);
    this.row(cells.map(() => '---'));
  }
}

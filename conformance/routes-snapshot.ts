/**
 * @file GitLab's routes snapshot (`config/routing/gitlab_routes.json`; cells-routing.md §5) read for
 * H6: every row's `example` and `dottedExample`, each also with `.json` when the row
 * `acceptsFormat`. The generator writes `foo` (`foo/bar` for a glob) and `john.doe` for parameters,
 * so a path whose first segment is one of those is led by a namespace (its route claim is that
 * segment); any other first segment is a literal top-level word of GitLab's, never a namespace.
 */
import { readFileSync } from 'node:fs';

export interface RouteRow {
  template: string;
  example: string;
  acceptsFormat?: boolean;
  dottedExample?: string;
}

export interface SnapshotCase {
  path: string;
  template: string;
  /** The route claim the path must give (namespace-led), or the word it must never be classified by. */
  lead: { kind: 'namespace'; claim: string } | { kind: 'word'; word: string };
}

/** What the snapshot generator puts in place of a parameter's first segment. */
const PARAMETER_VALUES = new Set(['foo', 'john.doe']);

function isRow(x: unknown): x is RouteRow {
  const r = x as Partial<RouteRow> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.template === 'string' &&
    typeof r.example === 'string' &&
    r.example.startsWith('/') &&
    (r.dottedExample === undefined || typeof r.dottedExample === 'string') &&
    (r.acceptsFormat === undefined || typeof r.acceptsFormat === 'boolean')
  );
}

/** Reads a snapshot file; a file that is not one says which row is wrong. */
export function readRoutesSnapshot(file: string): RouteRow[] {
  const rows: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(rows)) throw new Error(`${file}: not a JSON array of routes`);
  const bad = rows.findIndex((r) => !isRow(r));
  if (bad >= 0)
    throw new Error(`${file}: row ${bad} is not {template, example, acceptsFormat?, dottedExample?}`);
  return rows as RouteRow[];
}

/** Every path H6 asks, once each, with what its first segment must do. The root `/` is left out. */
export function snapshotCases(rows: readonly RouteRow[]): SnapshotCase[] {
  const cases = new Map<string, SnapshotCase>();
  for (const row of rows) {
    const bases = [row.example, ...(row.dottedExample ? [row.dottedExample] : [])];
    for (const base of bases) {
      const first = base.split('/')[1] ?? '';
      if (first === '') continue;
      const lead: SnapshotCase['lead'] = PARAMETER_VALUES.has(first)
        ? { kind: 'namespace', claim: first }
        : { kind: 'word', word: first };
      for (const path of row.acceptsFormat ? [base, `${base}.json`] : [base])
        if (!cases.has(path)) cases.set(path, { path, template: row.template, lead });
    }
  }
  return [...cases.values()];
}

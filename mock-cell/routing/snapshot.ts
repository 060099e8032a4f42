import { ROUTES, type RouteDef } from './routes.js';
import { type SnapshotEntry, snapshotEntry } from './spec.js';

/**
 * The route snapshot in `config/routing/gitlab_routes.json`'s shape (cells-routing.md §5), built
 * from the cell's own route table: one entry per template (deduplicated after the trailing
 * `(.:format)` is stripped; `acceptsFormat` when any spec of the template accepted a format),
 * test-only routes left out, sorted by template in byte order.
 */
export function routesSnapshot(routes: readonly RouteDef[] = ROUTES): SnapshotEntry[] {
  const byTemplate = new Map<string, SnapshotEntry>();
  for (const route of routes) {
    if (route.testOnly) continue;
    const entry = snapshotEntry(route.spec);
    const seen = byTemplate.get(entry.template);
    if (!seen) byTemplate.set(entry.template, entry);
    else if (entry.acceptsFormat && !seen.acceptsFormat)
      byTemplate.set(entry.template, { ...seen, acceptsFormat: true });
  }
  return [...byTemplate.values()]
    .map(({ template, example, acceptsFormat, dottedExample }) => ({
      template,
      example,
      ...(acceptsFormat ? { acceptsFormat } : {}),
      ...(dottedExample === undefined ? {} : { dottedExample }),
    }))
    .sort((a, b) => (a.template < b.template ? -1 : a.template > b.template ? 1 : 0));
}

/** The file's text: pretty-printed JSON with a trailing newline. */
export function snapshotText(entries: readonly SnapshotEntry[]): string {
  return `${JSON.stringify(entries, null, 2)}\n`;
}

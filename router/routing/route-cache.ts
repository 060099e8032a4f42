import type { RouteSource } from '../../lib/contracts/learn.js';

/**
 * Learned routes: prefix entries (`/my-company/` covers `/my-company` and everything below it) and
 * exact entries (`/-/profile`), each with its own expiry. Bounded: the least recently used entry is
 * evicted first. Lookup prefers an exact entry, then the longest prefix. Each entry keeps the learn
 * answer's `source`, so a cached `fallback` still lets the HTTP front's rules decide.
 */
export interface CachedRoute {
  /** The key the entry is stored under: `/a/b/` for a prefix, `/a/b` for an exact path. */
  key: string;
  cell: string;
  exact: boolean;
  source: RouteSource;
}

interface Entry extends CachedRoute {
  expiresAt: number;
}

export class RouteCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  lookup(path: string): CachedRoute | undefined {
    for (const key of candidateKeys(normalize(path))) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      if (entry.expiresAt <= this.now()) {
        this.entries.delete(key);
        continue;
      }
      // Move to the most recently used end.
      this.entries.delete(key);
      this.entries.set(key, entry);
      return { key: entry.key, cell: entry.cell, exact: entry.exact, source: entry.source };
    }
    return undefined;
  }

  /** Stores a learned route; `route.path` is the answer's `path`, `ttlMs` <= 0 stores nothing. */
  store(
    route: { path: string; cell: string; exact: boolean; source: RouteSource },
    ttlMs: number,
  ): CachedRoute | undefined {
    if (ttlMs <= 0) return undefined;
    const { cell, exact, source } = route;
    const p = normalize(route.path);
    const key = exact ? p : p === '/' ? '/' : `${p}/`;
    this.entries.delete(key);
    this.entries.set(key, { key, cell, exact, source, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return { key, cell, exact, source };
  }

  /** Drops every entry that would route `path` (its exact entry and all covering prefixes). */
  invalidate(path: string): number {
    let dropped = 0;
    for (const key of candidateKeys(normalize(path))) {
      if (this.entries.delete(key)) dropped++;
    }
    return dropped;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** `/a/b/` and `/a/b` → `/a/b`; empty → `/`. */
function normalize(path: string): string {
  const p = `/${path.replace(/^\/+/, '')}`.replace(/\/+$/, '');
  return p === '' ? '/' : p;
}

/** Exact key first, then prefixes from the longest to `/`. */
function candidateKeys(path: string): string[] {
  const keys = [path];
  const segments = path.split('/').filter((s) => s !== '');
  for (let i = segments.length; i >= 1; i--) keys.push(`/${segments.slice(0, i).join('/')}/`);
  keys.push('/');
  return keys;
}

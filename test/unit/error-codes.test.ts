import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../lib/proto.js';

/**
 * Error codes travel on the wire (framed error frames, logs, gRPC details), so they are contract:
 * every code a service's error registry defines must appear in a table row of its README.
 */
const root = projectRoot();
const REGISTRIES: Record<string, string[]> = {
  bridge: ['bridge/errors.ts'],
  router: ['router/errors.ts'],
  'mock-cell': ['mock-cell/errors.ts'],
  'mock-gitaly': ['mock-gitaly/errors.ts'],
  'topology-service': ['topology-service/errors.ts'],
};

/** `'SOME_CODE'` string literals in the registry (the first argument of each definition). */
function codesOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)].map((m) => m[1] as string);
}

/** Codes in table rows of the README: `` | `CODE` | … ``. */
function documented(service: string): Set<string> {
  const text = readFileSync(join(root, service, 'README.md'), 'utf8');
  const rows = text.split('\n').filter((line) => line.trimStart().startsWith('|'));
  return new Set(
    rows.flatMap((row) => [...row.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`/g)].map((m) => m[1] as string)),
  );
}

describe.each(Object.entries(REGISTRIES))('%s error codes', (service, files) => {
  it('are all in a table of its README', () => {
    const codes = files.flatMap(codesOf);
    expect(codes.length).toBeGreaterThan(0);
    const table = documented(service);
    expect(codes.filter((code) => !table.has(code))).toEqual([]);
  });
});

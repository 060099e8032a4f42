import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Every module the hook program loads (static and dynamic imports), from the TypeScript sources. */
function moduleGraph(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (files.includes(file)) continue;
    files.push(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/(?:from|import\()\s*'([^']+)'/g)) {
      const spec = m[1] as string;
      if (spec.startsWith('.')) todo.push(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  }
  return { files, packages };
}

describe('the hook program', () => {
  // A process per hook, two per push: its start-up is part of every push's time.
  it('loads only node built-ins (no jose, no fetch/undici)', () => {
    const { files, packages } = moduleGraph(join(HERE, 'hook-main.ts'));
    expect([...packages].filter((p) => !p.startsWith('node:'))).toEqual([]);
    for (const file of files) expect(readFileSync(file, 'utf8')).not.toMatch(/\bfetch\(/);
  });
});

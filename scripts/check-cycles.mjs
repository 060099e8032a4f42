#!/usr/bin/env node
// Fails when the runtime imports between the project's TypeScript files form a cycle. Type-only
// imports (`import type`, `export type`) are erased by the compiler and are not counted. Run by
// `npm run lint` (and so by CI); prints every cycle it finds.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SKIP = new Set(['node_modules', 'dist', 'var', '.git', 'data']);

function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

// `import … from './x.js'`, `export … from './x.js'`, `import('./x.js')`; not `import type` / `export type`.
const IMPORT =
  /^\s*(import|export)\s+(?!type\s)[^;]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const targets = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[2] ?? m[3];
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    targets.push(target);
  }
  return targets;
}

const files = tsFiles(root);
const known = new Set(files);
const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => known.has(t))]));

// Tarjan's strongly connected components: every component with more than one file is a cycle.
let index = 0;
const stack = [];
const state = new Map();
const cycles = [];
function visit(v) {
  state.set(v, { index, low: index, onStack: true });
  index += 1;
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    if (!state.has(w)) {
      visit(w);
      state.get(v).low = Math.min(state.get(v).low, state.get(w).low);
    } else if (state.get(w).onStack) {
      state.get(v).low = Math.min(state.get(v).low, state.get(w).index);
    }
  }
  if (state.get(v).low === state.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      state.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    const selfLoop = component.length === 1 && (graph.get(v) ?? []).includes(v);
    if (component.length > 1 || selfLoop) cycles.push(component);
  }
}
for (const f of files) if (!state.has(f)) visit(f);

if (cycles.length > 0) {
  process.stderr.write(`import cycles (${cycles.length}):\n`);
  for (const c of cycles) process.stderr.write(`  ${c.map((f) => relative(root, f)).join(' ↔ ')}\n`);
  process.exit(1);
}
process.stdout.write(`no import cycles among ${files.length} TypeScript files\n`);

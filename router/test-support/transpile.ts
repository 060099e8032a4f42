import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The project root (this file is router/test-support/transpile.ts). */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function sources(dir: string, ext = '.ts'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'test' || e.name === 'test-support' ? [] : sources(full, ext);
    return e.name.endsWith(ext) && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

/**
 * Transpiles `lib/` and `router/` (no type check, no tests) into `outDir` as runnable ES modules,
 * with the JSON files the code imports (the default ruleset), so tests can start `router/main.js`
 * as its own process without building the whole project.
 */
export function transpileRouter(outDir: string): string {
  for (const file of sources(join(PROJECT_ROOT, 'router'), '.json')) {
    const target = join(outDir, relative(PROJECT_ROOT, file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  for (const file of [...sources(join(PROJECT_ROOT, 'lib')), ...sources(join(PROJECT_ROOT, 'router'))]) {
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ES2022,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
        esModuleInterop: true,
      },
    });
    const target = join(outDir, relative(PROJECT_ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
  }
  writeFileSync(join(outDir, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(outDir, 'node_modules'));
  return join(outDir, 'router', 'main.js');
}

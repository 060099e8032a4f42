import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../lib/proto.js';

/** Programs compiled from the current sources, for tests that start them as processes of their own. */
export interface CompiledPrograms {
  /** The folder: a copy of the project layout with `.js` files, `package.json`, `node_modules`, `protos`. */
  dir: string;
  /** The compiled file of a project-relative source (`router/main.ts` → `<dir>/router/main.js`). */
  path(entry: string): string;
  /** Removes the folder. */
  cleanup(): void;
}

function emitted(dir: string, entry: string): string {
  if (!entry.endsWith('.ts')) throw new Error(`not a TypeScript source: ${entry}`);
  return join(dir, `${entry.slice(0, -'.ts'.length)}.js`);
}

/**
 * Compiles `entries` (project-relative TypeScript sources such as `bridge/main.ts`) and everything they
 * import, JSON files included, into a fresh temp folder, so a test can run `node <path(entry)>` from
 * the current sources rather than `dist/`, which may be stale. Emit only (`noCheck`): the project's
 * typecheck checks the sources, not every test file. The folder has its own `package.json`
 * (`"type": "module"`, and where `projectRoot()` stops) and links to the project's `node_modules` and
 * `protos`, so packages and `PROTO_DIR` resolve as they do from `dist/`.
 */
export async function compilePrograms(entries: readonly string[]): Promise<CompiledPrograms> {
  const root = projectRoot();
  const dir = mkdtempSync(join(tmpdir(), 'test-programs-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    symlinkSync(join(root, 'protos'), join(dir, 'protos'));
    const tsconfig = join(dir, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          noEmit: false,
          noCheck: true,
          sourceMap: false,
          rootDir: root,
          outDir: dir,
          typeRoots: [join(root, 'node_modules', '@types')],
        },
        files: entries.map((entry) => join(root, entry)),
        include: [],
      }),
    );
    await new Promise<void>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig],
        (err, stdout, stderr) => (err ? reject(new Error(`tsc failed: ${stdout}${stderr}`)) : resolve()),
      ),
    );
    for (const entry of entries) {
      if (!existsSync(emitted(dir, entry))) throw new Error(`tsc did not emit ${entry}`);
    }
  } catch (err) {
    cleanup();
    throw err;
  }
  return {
    dir,
    path(entry) {
      const file = emitted(dir, entry);
      if (!existsSync(file)) throw new Error(`${entry} was not compiled (not among ${entries.join(', ')})`);
      return file;
    },
    cleanup,
  };
}

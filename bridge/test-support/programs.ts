import { execFile } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../lib/proto.js';

export interface Programs {
  /** The folder; the caller removes it. */
  dir: string;
  /** `bridge/main.ts` compiled: run with `node <bridgeMain> --config <file>`. */
  bridgeMain: string;
  /** mock Gitaly's hook program, for `buildGitalyServer(…, { hookProgram })`. */
  hookMain: string;
}

/**
 * Compiles the programs a test runs as processes of their own from the current sources (not `dist/`,
 * which may be stale) into a temp folder that resolves `node_modules` and `protos` from the project.
 */
export async function buildPrograms(): Promise<Programs> {
  const root = projectRoot();
  const dir = mkdtempSync(join(tmpdir(), 'bridge-programs-'));
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
        // Emit only: the sources are type-checked by the project's typecheck, not once per test file.
        noCheck: true,
        sourceMap: false,
        rootDir: root,
        outDir: dir,
        typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: [join(root, 'bridge', 'main.ts'), join(root, 'mock-gitaly', 'hook-main.ts')],
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
  return {
    dir,
    bridgeMain: join(dir, 'bridge', 'main.js'),
    hookMain: join(dir, 'mock-gitaly', 'hook-main.js'),
  };
}

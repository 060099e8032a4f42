import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultHookProgram, installHooks } from './hooks.js';
import { cleanup, run, tempDir } from './test-support/harness.js';

afterEach(cleanup);

describe('installHooks', () => {
  it('writes executable wrappers that run the hook program with its name', async () => {
    const dir = tempDir();
    const program = join(tempDir("it's a dir "), 'hook.mjs');
    writeFileSync(program, 'process.stdout.write(process.argv.slice(2).join(","));\n');
    const hooksDir = await installHooks(dir, program);
    expect(hooksDir).toBe(join(dir, 'hooks'));
    for (const name of ['pre-receive', 'post-receive']) {
      const path = join(hooksDir, name);
      expect(statSync(path).mode & 0o111).toBe(0o111);
      const res = await run(path, []);
      expect(res.stdout.toString()).toBe(name);
    }
  });

  it('refuses a hook program that does not exist', async () => {
    await expect(installHooks(tempDir(), '/nonexistent/hook-main.js')).rejects.toThrow(/npm run build/);
  });

  it('points at the compiled program in dist/ when running from sources', () => {
    expect(defaultHookProgram()).toMatch(/\/dist\/mock-gitaly\/hook-main\.js$/);
  });
});

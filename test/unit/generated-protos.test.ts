import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../lib/proto.js';

const root = projectRoot();
const out = mkdtempSync(join(tmpdir(), 'generated-protos-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe('lib/generated', () => {
  it('is what `npm run generate` makes of protos/ today (regenerate after editing a .proto)', async () => {
    const script = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts.generate as string;
    const args = script
      .split(' ')
      .slice(1)
      .map((a) => (a === 'lib/generated' ? out : a));
    await promisify(execFile)(join(root, 'node_modules', '.bin', 'proto-loader-gen-types'), args, {
      cwd: root,
    });
    const checkedIn = join(root, 'lib', 'generated');
    const names = (dir: string) =>
      files(dir)
        .map((f) => relative(dir, f))
        .sort();
    expect(names(out)).toEqual(names(checkedIn));
    for (const name of names(out)) {
      expect(readFileSync(join(out, name), 'utf8'), name).toBe(readFileSync(join(checkedIn, name), 'utf8'));
    }
  });
});

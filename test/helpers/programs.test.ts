import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../lib/proto.js';
import { type CompiledPrograms, compilePrograms } from './programs.js';

let programs: CompiledPrograms;
beforeAll(async () => {
  programs = await compilePrograms(['lib/proto.ts', 'router/rules/default-ruleset.ts']);
}, 120_000);
afterAll(() => programs?.cleanup());

/** Runs an ES module snippet with node in the compiled folder; resolves with its stdout. */
function node(source: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { cwd: programs.dir },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

describe('compilePrograms', () => {
  it('maps a source to its compiled file, and refuses one it did not compile', () => {
    expect(programs.path('lib/proto.ts')).toBe(join(programs.dir, 'lib', 'proto.js'));
    expect(existsSync(programs.path('router/rules/default-ruleset.ts'))).toBe(true);
    expect(() => programs.path('bridge/main.ts')).toThrow('bridge/main.ts was not compiled');
  });

  it('finds the project root, the protos and the packages from the compiled folder', async () => {
    const out = await node(
      `const m = await import(${JSON.stringify(programs.path('lib/proto.ts'))});` +
        `console.log(JSON.stringify({ root: m.projectRoot(), protoDir: m.PROTO_DIR, ` +
        `service: Object.keys(m.loadSshService().service) }));`,
    );
    const seen = JSON.parse(out) as { root: string; protoDir: string; service: string[] };
    expect(seen.root).toBe(realpathSync(programs.dir));
    expect(seen.protoDir).toBe(join(seen.root, 'protos'));
    expect(seen.service).toContain('SSHUploadPackWithSidechannel');
  });

  it('carries the JSON files the code imports', async () => {
    const out = await node(
      `const m = await import(${JSON.stringify(programs.path('router/rules/default-ruleset.ts'))});` +
        'console.log(m.loadDefaultRuleset().rules.length);',
    );
    const rules = JSON.parse(
      readFileSync(join(projectRoot(), 'router', 'rules', 'default-rules.json'), 'utf8'),
    ) as unknown[];
    expect(rules.length).toBeGreaterThan(0);
    expect(Number(out)).toBe(rules.length);
  });

  it('reports a source that does not exist', async () => {
    await expect(compilePrograms(['router/no-such-main.ts'])).rejects.toThrow(/tsc failed/);
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';

let programs: CompiledPrograms;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  programs = await compilePrograms(['lib/test-support/log-until-signal.ts', 'bridge/main.ts']);
  dir = mkdtempSync(join(tmpdir(), 'logger-test-'));
}, 120_000);

afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

afterAll(() => {
  programs?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Starts `node <program> <args>`, waits for its `listening` log line, then closes the reading end of its stdout. */
async function startThenCloseStdout(program: string, args: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [program, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const stderr: Buffer[] = [];
  child.stderr?.on('data', (c: Buffer) => stderr.push(c));
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const onData = (c: Buffer) => {
      seen += c.toString();
      if (seen.includes('"msg":"listening"')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`exited ${code} before listening: ${Buffer.concat(stderr).toString()}`)),
    );
  });
  child.stdout?.destroy();
  return child;
}

/** Sends SIGTERM; resolves with the exit code (or signal), or 'hung' if the process is still there after `ms`. */
function terminate(child: ChildProcess, ms: number): Promise<number | string | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('hung'), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
    child.kill('SIGTERM');
  });
}

describe('createLogger with a stdout whose reader is gone', () => {
  it('lets a program that logs while stopping exit on SIGTERM', async () => {
    const child = await startThenCloseStdout(programs.path('lib/test-support/log-until-signal.ts'));
    expect(await terminate(child, 5_000)).toBe(0);
  });

  it('lets the bridge service stop on SIGTERM', async () => {
    for (const name of ['shell', 'workhorse']) {
      writeFileSync(join(dir, name), `${name}-secret-for-tests\n`);
      chmodSync(join(dir, name), 0o600);
    }
    const config = join(dir, 'bridge.json');
    writeFileSync(
      config,
      JSON.stringify({
        listen: '127.0.0.1:0',
        railsUrl: 'http://127.0.0.1:9',
        shellSecretFile: join(dir, 'shell'),
        workhorseSecretFile: join(dir, 'workhorse'),
      }),
    );
    const child = await startThenCloseStdout(programs.path('bridge/main.ts'), ['--config', config]);
    expect(await terminate(child, 5_000)).toBe(0);
  });
});

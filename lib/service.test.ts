import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../test/helpers/poll.js';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';
import { EXIT_BAD_CONFIG } from './service.js';

let programs: CompiledPrograms;

beforeAll(async () => {
  programs = await compilePrograms(['lib/test-support/service-main.ts']);
}, 120_000);

afterAll(() => programs?.cleanup());

function start(mode: string) {
  const child = spawn(process.execPath, [programs.path('lib/test-support/service-main.ts')], {
    env: { PATH: process.env.PATH, SVC_MODE: mode },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, exited, lines, out: () => stdout, err: () => stderr };
}

describe('runService', () => {
  it('exits 78 with "<name>: bad configuration: …" for a ConfigError, before any log line', async () => {
    const svc = start('bad-config');
    expect(await svc.exited).toBe(EXIT_BAD_CONFIG);
    expect(svc.err()).toBe('svc: bad configuration: port (SVC_PORT) must be a number\n');
    expect(svc.out()).toBe('');
  });

  it('exits 78 for an error the service calls a bad setting (isBadConfig)', async () => {
    const svc = start('bad-topology');
    expect(await svc.exited).toBe(EXIT_BAD_CONFIG);
    expect(svc.err()).toBe('svc: bad configuration: topology: cells[0].name is missing\n');
  });

  it('exits 1 with the stack for any other failure', async () => {
    const svc = start('crash');
    expect(await svc.exited).toBe(1);
    expect(svc.err()).toMatch(/^svc: failed to start: Error: boom in build\n\s+at /);
  });

  it('exits 1 when listening fails, naming the error on stderr and closing what was built', async () => {
    const svc = start('listen-fails');
    expect(await svc.exited).toBe(1);
    expect(svc.err()).toContain(
      'svc: failed to start: Error: listen EADDRINUSE: address already in use 127.0.0.1:9',
    );
    expect(svc.lines().map((l) => l.msg)).toEqual(['closed']);
  });

  it('logs listening with the fields listen() gave, then stops on SIGTERM with the shutdown details', async () => {
    const svc = start('ok');
    await waitUntil(() => svc.lines().some((l) => l.msg === 'listening'), 10_000, 'the listening line');
    expect(svc.lines()[0]).toMatchObject({
      msg: 'listening',
      service: 'svc',
      address: '127.0.0.1:9',
      extra: 'x',
    });
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    expect(svc.lines().map((l) => l.msg)).toEqual(['listening', 'shutting down', 'closed', 'stopped']);
    expect(svc.lines()[1]).toMatchObject({ signal: 'SIGTERM', in_flight: 0 });
  });
});

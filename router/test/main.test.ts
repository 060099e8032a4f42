import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../test/helpers/poll.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import { collect, makeKeyPair, ssh } from '../test-support/clients.js';
import { createWorld, type FakeCell, startFakeCells } from '../test-support/fake-cell.js';
import { CELLS } from '../test-support/stack.js';

/** `router/main.ts` as its own process: config errors, the listening line, signals. */
let dir: string;
let programs: CompiledPrograms;
let main: string;
let cells: Map<string, FakeCell>;
const children = new Set<ChildProcessWithoutNullStreams>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-main-'));
  programs = await compilePrograms(['router/main.ts']);
  main = programs.path('router/main.ts');
  const secret = 'b'.repeat(32);
  writeFileSync(join(dir, 'secret'), secret, { mode: 0o600 });
  const world = createWorld(secret, 'cell_us0');
  const alice = await makeKeyPair(join(dir, 'alice'));
  world.users.push({ id: 5, username: 'alice' });
  world.keys.push({ id: 50, userId: 5, blob: alice.blob });
  cells = await startFakeCells(
    CELLS.map((c) => c.name),
    world,
  );
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all([...(cells?.values() ?? [])].map((c) => c.stop()));
  programs?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function start(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, `config-${children.size}.json`);
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [main, '--config', file], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  children.add(child);
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

function validConfig() {
  return {
    sshListen: '127.0.0.1:0',
    httpListen: '127.0.0.1:0',
    metricsListen: '127.0.0.1:0',
    hostKeyFile: join(dir, 'host_key'),
    shellSecretFile: join(dir, 'secret'),
    region: 'eu',
    cells: CELLS.map((c) => ({ ...c, url: cells.get(c.name)?.url })),
  };
}

describe('router main', () => {
  it('exits 78 with a message naming the bad setting', async () => {
    const r = start({ ...validConfig(), region: 'mars' });
    expect(await r.exited).toBe(78);
    expect(r.err()).toContain('region (ROUTER_REGION) "mars" has no cell');
  });

  it('exits 78 naming the rule and field of a bad rulesFile', async () => {
    const rules = join(dir, 'rules.json');
    writeFileSync(
      rules,
      JSON.stringify([{ id: 'elsewhere', action: 'proxy', proxy: { address: 'x.example:1' } }]),
    );
    const r = start({ ...validConfig(), rulesFile: rules });
    expect(await r.exited).toBe(78);
    expect(r.err()).toContain(`router: bad configuration: ruleset ${rules}: rule "elsewhere": proxy.address`);
  });

  it('exits 78 when the shell secret file is readable by others', async () => {
    const loose = join(dir, 'loose-secret');
    writeFileSync(loose, 'x'.repeat(32), { mode: 0o644 });
    const r = start({ ...validConfig(), shellSecretFile: loose });
    expect(await r.exited).toBe(78);
    expect(r.err()).toContain('chmod 600');
  });

  it('logs one listening line, serves SSH and metrics, and stops on SIGTERM with exit 0', async () => {
    const r = start(validConfig(), { ROUTER_LOG_LEVEL: 'info' });
    const line = await waitUntil(
      () =>
        r
          .out()
          .split('\n')
          .find((l) => l.includes('"msg":"listening"')),
      15_000,
      'the listening line',
    );
    const listening = JSON.parse(line) as { ssh: string; http: string; metrics: string; service: string };
    expect(listening.service).toBe('router');
    const sshPort = Number(listening.ssh.split(':')[1]);

    const welcome = await collect(ssh(join(dir, 'alice'), sshPort, [], ['-T']));
    expect(welcome.stdout).toBe('Welcome to GitLab, @alice!\n');
    const metrics = await (await fetch(`http://${listening.metrics}/metrics`)).text();
    expect(metrics).toContain('gitlab_cells_router_ssh_connections_total 1');

    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(r.out()).toContain('"msg":"stopped"');
  });
});

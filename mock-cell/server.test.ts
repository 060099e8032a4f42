import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config.js';
import { prepare, type RunningCells, startCells } from './server.js';
import {
  demoModel,
  demoTopology,
  GITALY_TOKEN,
  SHELL_SECRET,
  shellHeaders,
  silentLogger,
  tempDir,
  testDeps,
  WORKHORSE_SECRET,
} from './test-support/fixtures.js';

let cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** Writes a topology, secrets (mode 600) and a config file object into a temp folder. */
function writeSetup() {
  const tmp = tempDir();
  cleanups.push(tmp.cleanup);
  const secret = (name: string, value: string) => {
    const path = join(tmp.dir, name);
    writeFileSync(path, `${value}\n`, { mode: 0o600 });
    return path;
  };
  const topologyFile = join(tmp.dir, 'topology.json');
  writeFileSync(topologyFile, JSON.stringify(demoTopology(tmp.dir)));
  const file = {
    topologyFile,
    listen: [
      { cell: 'cell_us0', address: '127.0.0.1:0' },
      { cell: 'cell_eu0', address: '127.0.0.1:0' },
    ],
    shellSecretFile: secret('shell', SHELL_SECRET),
    workhorseSecretFile: secret('workhorse', WORKHORSE_SECRET),
    gitalyTokenFile: secret('gitaly', GITALY_TOKEN),
    logLevel: 'silent',
  };
  return { dir: tmp.dir, file };
}

describe('prepare', () => {
  it('loads config, topology and secrets (trimmed)', () => {
    const { file } = writeSetup();
    const prepared = prepare(file, {});
    expect(prepared.config.listen.map((l) => l.cell)).toEqual(['cell_us0', 'cell_eu0']);
    expect(prepared.model.projectById(3)?.path).toBe('my-project');
    expect(prepared.secrets.gitalyToken).toBe(GITALY_TOKEN);
  });

  it('refuses a listen entry naming a cell the topology lacks', () => {
    const { file } = writeSetup();
    expect(() => prepare({ ...file, listen: [{ cell: 'cell_mars', address: '127.0.0.1:0' }] }, {})).toThrow(
      new ConfigError(
        'listen[0].cell: no cell "cell_mars" in the topology (cells: cell_us0, cell_us1, cell_eu0, cell_eu1)',
      ),
    );
  });

  it('refuses secrets readable by others', () => {
    const { file } = writeSetup();
    chmodSync(file.workhorseSecretFile, 0o644);
    expect(() => prepare(file, {})).toThrow(/workhorse secret file .* has permissions 644/);
  });

  it('refuses an invalid topology with CELL_TOPOLOGY_INVALID', () => {
    const { dir, file } = writeSetup();
    const broken = demoTopology(dir);
    broken.namespaces.shift(); // gitlab-org, which projects and members refer to
    writeFileSync(file.topologyFile, JSON.stringify(broken));
    expect(() => prepare(file, {})).toThrow(expect.objectContaining({ code: 'CELL_TOPOLOGY_INVALID' }));
  });
});

describe('startCells over real sockets', () => {
  it('serves each cell on its own port with its own identity', async () => {
    const model = demoModel();
    const running: RunningCells = await startCells(
      model,
      [
        { cell: 'cell_us0', host: '127.0.0.1', port: 0 },
        { cell: 'cell_eu0', host: '127.0.0.1', port: 0 },
      ],
      testDeps({ logger: silentLogger }),
    );
    cleanups.push(() => running.close());
    const [us0, eu0] = running.cells;
    expect(running.cells.map((c) => c.cell)).toEqual(['cell_us0', 'cell_eu0']);
    expect(us0?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(us0?.url).not.toBe(eu0?.url);

    const check = await fetch(`${us0?.url}/api/v4/internal/check`, { headers: await shellHeaders() });
    expect(check.status).toBe(200);
    expect(await check.json()).toMatchObject({ api_version: 'v4', redis: true });

    const allowed = async (base: string | undefined) =>
      fetch(`${base}/api/v4/internal/allowed`, {
        method: 'POST',
        headers: { ...(await shellHeaders()), 'content-type': 'application/json' },
        body: JSON.stringify({
          action: 'git-upload-pack',
          project: 'my-company/my-project.git',
          key_id: '2',
          changes: '_any',
          protocol: 'ssh',
        }),
      });
    const misdirected = await allowed(us0?.url);
    expect(misdirected.status).toBe(421);
    expect(misdirected.headers.get('x-gitlab-cell-redirect')).toBe('cell_eu0');
    const served = await allowed(eu0?.url);
    expect(served.status).toBe(200);
    expect(((await served.json()) as { gl_repository: string }).gl_repository).toBe('project-3');

    await running.close();
    await expect(fetch(`${eu0?.url}/api/v4/internal/check`)).rejects.toThrow();
  });

  it('shares sessions and tokens between the cells of the process', async () => {
    const running = await startCells(
      demoModel(),
      [
        { cell: 'cell_us0', host: '127.0.0.1', port: 0 },
        { cell: 'cell_eu0', host: '127.0.0.1', port: 0 },
      ],
      testDeps(),
    );
    cleanups.push(() => running.close());
    const [us0, eu0] = running.cells.map((c) => c.url);
    const signIn = await fetch(`${us0}/users/sign_in?redirect=/my-company/my-project`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'user%5Blogin%5D=alice&user%5Bpassword%5D=alice-password',
    });
    expect(signIn.status).toBe(302);
    expect(signIn.headers.get('x-gitlab-cell')).toBe('cell_us0');
    const cookie = signIn.headers.get('set-cookie')?.split(';')[0] as string;
    expect(cookie).toMatch(/^_gitlab_session=cell-3-[0-9a-f]{32}$/);
    const page = await fetch(`${eu0}${signIn.headers.get('location')}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>My Company / my-project · cell_eu0</h1>');

    const minted = await fetch(`${eu0}/api/v4/user/personal_access_tokens`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli', scopes: ['read_user'] }),
    });
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()) as { token: string };
    const user = await fetch(`${us0}/api/v4/user`, { headers: { 'private-token': token } });
    expect(user.status).toBe(200);
    expect(user.headers.get('x-gitlab-cell')).toBe('cell_us0');
    expect(((await user.json()) as { username: string }).username).toBe('alice');
  });

  it('closes the cells it started when a later one cannot listen', async () => {
    const model = demoModel();
    const first = await startCells(model, [{ cell: 'cell_us0', host: '127.0.0.1', port: 0 }], testDeps());
    cleanups.push(() => first.close());
    const port = Number(new URL(first.cells[0]?.url ?? '').port);
    await expect(
      startCells(
        model,
        [
          { cell: 'cell_us1', host: '127.0.0.1', port: 0 },
          { cell: 'cell_eu0', host: '127.0.0.1', port },
        ],
        testDeps(),
      ),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});

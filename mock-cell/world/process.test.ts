import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCiJobToken } from '../../lib/ci-job-token.js';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import {
  demoTopology,
  GITALY_TOKEN,
  SHELL_SECRET,
  shellHeaders,
  tempDir,
  WORKHORSE_SECRET,
} from '../test-support/fixtures.js';
import { startWorldChild, type WorldChild } from '../test-support/world-child.js';

/**
 * The mock cell as a world's supervisor runs it: a real process with an IPC channel, two cells on
 * free ports, GitLab-faithful (seed000Routing off). Control requests go in, answers and journal
 * entries come out.
 */

let programs: CompiledPrograms;
let child: WorldChild;
const tmp = tempDir();

beforeAll(async () => {
  programs = await compilePrograms(['mock-cell/main.ts']);
  const secret = (name: string, value: string) => {
    const path = join(tmp.dir, name);
    writeFileSync(path, `${value}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
    return path;
  };
  const topology = demoTopology(tmp.dir);
  delete topology.seed000Routing;
  writeFileSync(join(tmp.dir, 'topology.json'), JSON.stringify(topology));
  mkdirSync(join(tmp.dir, 'cell_eu0', hashedRepoPath(3)), { recursive: true });
  const config = {
    topologyFile: join(tmp.dir, 'topology.json'),
    listen: [
      { cell: 'cell_us0', address: '127.0.0.1:0' },
      { cell: 'cell_eu0', address: '127.0.0.1:0' },
    ],
    shellSecretFile: secret('shell', SHELL_SECRET),
    workhorseSecretFile: secret('workhorse', WORKHORSE_SECRET),
    gitalyTokenFile: secret('gitaly', GITALY_TOKEN),
    logLevel: 'info',
  };
  writeFileSync(join(tmp.dir, 'mock-cell.json'), JSON.stringify(config));
  child = await startWorldChild(programs.path('mock-cell/main.ts'), join(tmp.dir, 'mock-cell.json'));
}, 120_000);

afterAll(async () => {
  await child?.stop();
  programs?.cleanup();
  tmp.cleanup();
});

const allowedBody = {
  action: 'git-upload-pack',
  project: 'my-company/my-project.git',
  key_id: 2,
  protocol: 'ssh',
};

async function allowed(cell: string) {
  return fetch(`${child.urls[cell]}/api/v4/internal/allowed`, {
    method: 'POST',
    headers: { ...(await shellHeaders()), 'content-type': 'application/json' },
    body: JSON.stringify(allowedBody),
  });
}

describe('mock cell process with a world channel', () => {
  it('journals each request of each cell with its fields', async () => {
    const from = child.journal.length;
    const res = await allowed('cell_eu0');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gitlab-cell')).toBeNull();
    const entry = await child.waitForEntry((e) => e.endpoint === '/api/v4/internal/allowed', from);
    expect(entry).toMatchObject({
      cell: 'cell_eu0',
      service: 'rails',
      method: 'POST',
      status: 200,
      fields: { action: 'git-upload-pack', project: 'my-company/my-project.git', key_id: 2, protocol: 'ssh' },
      jwt: { 'gitlab-shell-api-request': { iss: 'gitlab-shell' } },
    });
    expect(entry.bytesIn).toBeGreaterThan(0);
    expect(entry.bytesOut).toBeGreaterThan(0);
    // GitLab-faithful: another cell's project is one cell_us0 does not have.
    expect((await allowed('cell_us0')).status).toBe(404);
    await child.waitForEntry((e) => e.cell === 'cell_us0' && e.status === 404, from);
  });

  it('answers fault, clearFaults and reset; a fault decides the answer and is journaled', async () => {
    const programmed = await child.control(
      'fault',
      { endpoint: '/api/v4/internal/allowed', status: 503, body: { message: 'cell down' }, retryAfter: 60 },
      'cell_eu0',
    );
    expect(programmed).toMatchObject({
      type: 'control-answer',
      ok: true,
      result: { id: 'cell_eu0-fault-1' },
    });
    const from = child.journal.length;
    const res = await allowed('cell_eu0');
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
      503,
      '60',
      { message: 'cell down' },
    ]);
    expect(await child.waitForEntry((e) => e.fault !== undefined, from)).toMatchObject({
      status: 503,
      fault: { kind: 'answer', id: 'cell_eu0-fault-1' },
    });
    expect((await allowed('cell_us0')).status).toBe(404);
    expect(await child.control('clearFaults', {}, 'cell_eu0')).toMatchObject({
      ok: true,
      result: { cleared: 1 },
    });
    expect((await allowed('cell_eu0')).status).toBe(200);

    await child.control('fault', { endpoint: '/api/v4/internal/allowed', reset: true, times: 1 }, 'cell_eu0');
    await expect(allowed('cell_eu0')).rejects.toThrow();
    expect(await child.waitForEntry((e) => e.status === 'reset', from)).toMatchObject({ cell: 'cell_eu0' });
    expect((await allowed('cell_eu0')).status).toBe(200);
    await child.control('fault', { endpoint: '/api/v4/internal/*', status: 500 }, 'cell_eu0');
    expect(await child.control('reset', {}, 'cell_eu0')).toMatchObject({ ok: true, result: { cleared: 1 } });
  });

  it('refuses bad arguments, unknown cells and unknown ops with a message', async () => {
    expect(await child.control('fault', { endpoint: 'x' }, 'cell_eu0')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/endpoint/),
    });
    expect(await child.control('fault', { endpoint: '/x', status: 500 }, 'cell_mars')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/unknown cell cell_mars/),
    });
    expect(await child.control('explode', {}, 'cell_eu0')).toMatchObject({
      ok: false,
      error: 'unknown control op rails explode',
    });
  });

  it('puts an organization in maintenance on every cell of the process, and out again', async () => {
    const set = await child.control(
      'maintenance',
      { organization: 'my-organization', state: 'time-bounded' },
      'cell_us0',
    );
    expect(set).toMatchObject({
      ok: true,
      result: { state: 'maintenance', refusal: { status: 503, retryAfter: 60 } },
    });
    const res = await allowed('cell_eu0');
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
      503,
      '60',
      { status: false, message: 'This organization is temporarily unavailable due to maintenance.' },
    ]);
    await child.control('maintenance', { organization: 'my-organization', state: 'indefinite' }, 'cell_eu0');
    expect((await allowed('cell_eu0')).status).toBe(403);
    await child.control('maintenance', { organization: 'my-organization', state: 'off' }, 'cell_eu0');
    expect((await allowed('cell_eu0')).status).toBe(200);
  });

  it('issues glcbt- job tokens and moves an organization between cells', async () => {
    const issued = await child.control(
      'issueJobToken',
      { user: 'alice', project: 'my-company/my-project' },
      'cell_eu0',
    );
    expect(decodeCiJobToken((issued.result as { token: string }).token)?.routing).toMatchObject({
      u: '2',
      p: '3',
    });
    const moved = await child.control(
      'moveOrganization',
      { organization: 'my-organization', cell: 'cell_us0' },
      'cell_eu0',
    );
    expect(moved).toMatchObject({
      ok: true,
      result: { organization: 'my-organization', from: 'cell_eu0', to: 'cell_us0' },
    });
    expect((await allowed('cell_us0')).status).toBe(200);
    expect((await allowed('cell_eu0')).status).toBe(404);
  });
});

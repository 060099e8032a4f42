import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, gitViaSsh, remoteUrl, ssh } from '../test-support/clients.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/** Learning, caching, 421 redirects and fallbacks, over SSH and over the HTTP front. */
let stack: TestStack;
let work: string;

beforeAll(async () => {
  stack = await startTestStack();
  work = mkdtempSync(join(stack.dir, 'work-'));
  await Promise.all([
    stack.addProject('moving/proj', 'cell_us1'),
    stack.addProject('hopping/proj', 'cell_eu1'),
    stack.addProject('legacy-ns/proj', 'cell_us0'),
    stack.addProject('elsewhere/proj', 'cell_us1'),
    stack.addProject('pages/proj', 'cell_eu0'),
  ]);
});

afterAll(async () => {
  await stack?.close();
});

function count(cell: string, prefix: string): number {
  return stack.cell(cell).seen(prefix).length;
}

function allLearns(): number {
  return [...stack.cells.keys()].reduce((n, c) => n + count(c, '/api/v4/internal/cells/learn'), 0);
}

function move(path: string, cell: string): void {
  const project = stack.world.projects.find((p) => p.path === path);
  if (!project) throw new Error(`no project ${path}`);
  project.cell = cell;
}

async function clone(project: string, dest: string) {
  return collect(
    gitViaSsh(stack.alice.privateKey, stack.sshPort, [
      'clone',
      '-q',
      remoteUrl(stack.sshPort, project),
      join(work, dest),
    ]),
  );
}

describe('learning', () => {
  it('learns from a cell of its own region only', async () => {
    const before = allLearns();
    expect((await clone('elsewhere/proj', 'elsewhere')).code).toBe(0);
    expect(allLearns()).toBe(before + 1);
    expect(
      count('cell_us0', '/api/v4/internal/cells/learn') + count('cell_us1', '/api/v4/internal/cells/learn'),
    ).toBe(0);
  });

  it('drops the cached route on a 421 from /allowed, learns again and retries once', async () => {
    expect((await clone('moving/proj', 'moving-1')).code).toBe(0);
    move('moving/proj', 'cell_eu0');
    const redirects = stack.router.metrics.redirects;
    const learnsBefore = allLearns();
    const allowedBefore = count('cell_eu0', '/api/v4/internal/allowed');

    const res = await clone('moving/proj', 'moving-2');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(stack.router.metrics.redirects).toBe(redirects + 1);
    expect(allLearns()).toBe(learnsBefore + 1);
    expect(count('cell_eu0', '/api/v4/internal/allowed')).toBe(allowedBefore + 1);
  });

  it('retries once when the tunnel itself answers 421', async () => {
    expect((await clone('hopping/proj', 'hopping-1')).code).toBe(0);
    stack.world.tunnelOverrides.set('hopping/proj', (cell) => {
      if (cell !== 'cell_eu1') return undefined;
      // The project moves between /allowed and the tunnel request.
      move('hopping/proj', 'cell_eu0');
      return {
        status: 421,
        headers: { 'x-gitlab-cell-redirect': 'cell_eu0' },
        body: Buffer.from('not mine'),
      };
    });
    const redirects = stack.router.metrics.redirects;
    const res = await clone('hopping/proj', 'hopping-2');
    expect(res.code).toBe(0);
    expect(stack.router.metrics.redirects).toBe(redirects + 1);
    expect(stack.cell('cell_eu0').seen('/hopping/proj.git/ssh-upload-pack').length).toBeGreaterThan(0);
  });

  it('gives up after the second 421 with the cell message', async () => {
    stack.world.tunnelOverrides.set('hopping/proj', () => ({
      status: 421,
      headers: { 'x-gitlab-cell-redirect': 'cell_eu0', 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ status: false, message: 'Project is moving, retry later' })),
    }));
    try {
      const res = await collect(
        ssh(stack.alice.privateKey, stack.sshPort, ['git-upload-pack', "'hopping/proj.git'"]),
      );
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('remote: ERROR: Project is moving, retry later\n');
    } finally {
      stack.world.tunnelOverrides.delete('hopping/proj');
    }
  });

  it('falls back to the legacy cell when learning fails', async () => {
    stack.world.learnFails = true;
    try {
      const fallbacks = stack.router.metrics.fallbacks;
      const res = await clone('legacy-ns/proj', 'legacy');
      expect(res.code).toBe(0);
      expect(stack.router.metrics.fallbacks).toBe(fallbacks + 1);
      expect(stack.cell('cell_us0').seen('/legacy-ns/proj.git/ssh-upload-pack').length).toBe(1);
    } finally {
      stack.world.learnFails = false;
    }
  });
});

describe('HTTP front', () => {
  const base = () => `http://127.0.0.1:${stack.addresses.http.port}`;

  it('proxies to the cell that learn names, adding X-Forwarded-For', async () => {
    const res = await fetch(`${base()}/pages/proj/-/issues?state=open`, {
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      cell: 'cell_eu0',
      path: '/pages/proj/-/issues',
      xForwardedFor: '203.0.113.9, 127.0.0.1',
    });
  });

  it('streams request bodies to the cell', async () => {
    const body = 'x'.repeat(200_000);
    const res = await fetch(`${base()}/pages/proj/upload`, { method: 'POST', body });
    expect(await res.json()).toMatchObject({ cell: 'cell_eu0', method: 'POST', bodyLength: body.length });
  });

  it('sends unknown paths to the legacy cell', async () => {
    const res = await fetch(`${base()}/explore/projects`);
    expect(await res.json()).toMatchObject({ cell: 'cell_us0', path: '/explore/projects' });
  });

  it('retries a bodiless request after a 421', async () => {
    await fetch(`${base()}/pages/other-page`).then((r) => r.arrayBuffer());
    move('pages/proj', 'cell_eu1');
    const res = await fetch(`${base()}/pages/other-page`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ cell: 'cell_eu1' });
  });

  it('answers 502 when the cell is unreachable', async () => {
    await stack.cell('cell_eu1').stop();
    const res = await fetch(`${base()}/pages/third-page`);
    expect(res.status).toBe(502);
  });
});

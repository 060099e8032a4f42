import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, SHELL_HEADER, signShellJwt } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { fetchCounters } from '../../router/test-support/spawned-router.js';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * An organization move followed over HTTP, through the demo's router (learned routes): a clone over
 * HTTP is served by the old cell's bridge; the organization moves (the mock cell's admin endpoint
 * moves its repositories and routes); the next HTTP clone gets one 421 from the old cell, is learned
 * again and is served by the new cell's bridge from the new cell's repository; a push over HTTP
 * lands there. The stack's topology router (claims in the Topology Service) follows the same moves
 * over HTTP without any 421.
 */
let stack: RunningStack;
let work: string;

const PROJECT = 'my-company/my-project';
const ALICE = 'alice:alice-password';
const LEARNS = 'gitlab_cells_router_learn_requests_total';
const REDIRECTS = 'gitlab_cells_router_redirects_total';
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Alice',
  GIT_AUTHOR_EMAIL: 'alice@example.com',
  GIT_COMMITTER_NAME: 'Alice',
  GIT_COMMITTER_EMAIL: 'alice@example.com',
};

beforeAll(async () => {
  stack = await startStack();
  work = mkdtempSync(join(stack.dataDir, 'git-http-move-'));
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

/** The clone URL of `project` with Alice's password through the router whose HTTP front is `front`. */
function viaRouter(project: string, front: string | undefined): string {
  if (!front) throw new Error('stack.json names no such router');
  return `http://${ALICE}@${new URL(front).host}/${project}.git`;
}

function git(args: string[], cwd = work) {
  return run('git', args, {
    cwd,
    env: { ...stack.gitEnv('alice'), ...IDENTITY, GIT_TERMINAL_PROMPT: '0' },
    timeoutMs: 60_000,
  });
}

let seq = 0;
async function clone(front: string | undefined): Promise<{ dir: string; head: string }> {
  const dir = join(work, `clone-${++seq}`);
  const r = await git(['clone', '-q', viaRouter(PROJECT, front), dir]);
  expect(r.code, r.stderr).toBe(0);
  return { dir, head: (await runOk('git', ['-C', dir, 'rev-parse', 'HEAD'])).trim() };
}

/** Successful git HTTP requests of `route` each cell's bridge served so far. */
async function servedByCell(route: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const cell of stack.json.cells) {
    const counters = await fetchCounters(cell.metrics);
    out[cell.name] = Object.entries(counters)
      .filter(([k]) => k.startsWith('bridge_requests_total{') && k.includes(`route="${route}"`))
      .filter(([k]) => k.includes('outcome="ok"'))
      .reduce((n, [, v]) => n + v, 0);
  }
  return out;
}

/** What one step changed: the router's learn calls and 421 redirects, and which bridges served `route`. */
async function measure<T>(route: string, step: () => Promise<T>) {
  const counters = () => fetchCounters(stack.json.routerMetrics);
  const [before, servedBefore] = await Promise.all([counters(), servedByCell(route)]);
  const result = await step();
  const [after, servedAfter] = await Promise.all([counters(), servedByCell(route)]);
  return {
    result,
    learns: (after[LEARNS] ?? 0) - (before[LEARNS] ?? 0),
    redirects: (after[REDIRECTS] ?? 0) - (before[REDIRECTS] ?? 0),
    servedBy: Object.keys(servedAfter).filter((c) => (servedAfter[c] ?? 0) > (servedBefore[c] ?? 0)),
  };
}

async function moveOrganization(organization: string, cell: string) {
  const key = jwtKey(readSecretFile(stack.json.secrets.shell, 'shell secret'));
  const res = await fetch(
    `${stack.json.cells[0]?.rails}/api/v4/internal/admin/organizations/${organization}/move`,
    {
      method: 'POST',
      headers: { [SHELL_HEADER]: await signShellJwt(key), 'content-type': 'application/json' },
      body: JSON.stringify({ cell }),
    },
  );
  const body = (await res.json()) as { from: string; to: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** A ref of the moved project's bare repository in the storage of `cell`. */
async function refIn(cell: string, ref: string): Promise<string> {
  const repo = stack.project(PROJECT).repository.replace('/cells/cell_eu0/', `/cells/${cell}/`);
  return (await runOk('git', ['--git-dir', repo, 'rev-parse', ref])).trim();
}

describe('an organization moved, followed over HTTP through the router', () => {
  it('clone (old cell), move, clone (one 421, then the new cell), push lands on the new cell', async () => {
    const first = await measure('git_upload_pack', () => clone(stack.json.router.http));
    expect(first.servedBy).toEqual(['cell_eu0']);
    expect(first.redirects).toBe(0);

    const moved = await moveOrganization('my-organization', 'cell_eu1');
    expect([moved.from, moved.to]).toEqual(['cell_eu0', 'cell_eu1']);

    const after = await measure('git_upload_pack', () => clone(stack.json.router.http));
    expect([after.servedBy, after.redirects, after.learns]).toEqual([['cell_eu1'], 1, 1]);
    expect(after.result.head).toBe(await refIn('cell_eu1', 'main'));

    const d = after.result.dir;
    writeFileSync(join(d, 'after-move.txt'), 'moved\n');
    expect((await git(['add', '.'], d)).code).toBe(0);
    expect((await git(['commit', '-qm', 'after the move'], d)).code).toBe(0);
    const push = await measure('git_receive_pack', () => git(['push', 'origin', 'HEAD:refs/heads/moved'], d));
    expect(push.result.code, push.result.stderr).toBe(0);
    expect([push.servedBy, push.redirects]).toEqual([['cell_eu1'], 0]);
    const pushed = (await runOk('git', ['-C', d, 'rev-parse', 'HEAD'])).trim();
    expect(await refIn('cell_eu1', 'refs/heads/moved')).toBe(pushed);
  }, 120_000);

  it('the topology router’s HTTP front follows the claims: the new cell now, the old one after a move back', async () => {
    const topology = stack.json.routerTopology?.http;
    const now = await measure('git_upload_pack', () => clone(topology));
    expect(now.servedBy).toEqual(['cell_eu1']);
    expect(now.result.head).toBe(await refIn('cell_eu1', 'main'));

    await moveOrganization('my-organization', 'cell_eu0');
    const back = await measure('git_upload_pack', () => clone(topology));
    expect(back.servedBy).toEqual(['cell_eu0']);
    expect(back.result.head).toBe(await refIn('cell_eu0', 'main'));
  }, 120_000);
});

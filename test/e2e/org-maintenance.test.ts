import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, SHELL_HEADER, signShellJwt } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * Organization maintenance as a git user meets it: GitLab's org-mover API (on the cell's Rails, shell
 * JWT) takes my-organization (id 3, cell_eu0) into maintenance; a clone through the real router and
 * OpenSSH fails with the cell's message on git's stderr — the time-bounded text for `migration`, the
 * indefinite one for `legal` — as does `git-lfs-authenticate`; the API answers `503` + `Retry-After: 60`
 * through the router's HTTP front; everything works again once the organization is active.
 */
let stack: RunningStack;
let dir: string;
const ORG_ID = 3;
const PROJECT = 'my-company/my-project';

beforeAll(async () => {
  stack = await startStack();
  dir = mkdtempSync(join(tmpdir(), 'org-maintenance-'));
});

afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function orgMover(op: string, params: Record<string, unknown> = {}): Promise<number> {
  const key = jwtKey(readSecretFile(stack.json.secrets.shell, 'shell secret'));
  const rails = stack.json.cells.find((c) => c.name === 'cell_eu0')?.rails;
  const res = await fetch(`${rails}/api/v4/internal/org_mover/${op}`, {
    method: 'POST',
    headers: { [SHELL_HEADER]: await signShellJwt(key), 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: ORG_ID, ...params }),
  });
  await res.arrayBuffer();
  return res.status;
}

function ssh(user: string, command: string) {
  const args = stack.sshCommand(user).split(' ').slice(1);
  return run('ssh', [...args, '-p', String(stack.sshPort), 'git@127.0.0.1', command], {
    env: stack.gitEnv(user),
    timeoutMs: 60_000,
  });
}

let seq = 0;
async function clone(user: string) {
  return run('git', ['clone', '-q', stack.url(PROJECT), join(dir, `clone-${++seq}`)], {
    env: stack.gitEnv(user),
    timeoutMs: 60_000,
  });
}

describe('an organization in maintenance, seen from git over SSH', () => {
  it('prints the time-bounded message, then the indefinite one, then clones again', async () => {
    expect((await clone('alice')).code).toBe(0);

    expect(await orgMover('start_maintenance', { maintenance_reason: 'migration' })).toBe(204);
    const bounded = await clone('alice');
    expect(bounded.code).not.toBe(0);
    expect(bounded.stderr).toContain('This organization is temporarily unavailable due to maintenance.');
    const lfs = await ssh('alice', `git-lfs-authenticate '${PROJECT}.git' download`);
    expect(lfs.code).not.toBe(0);
    expect(lfs.stderr).toContain('This organization is temporarily unavailable due to maintenance.');
    // The API of the organization's projects, through the router's HTTP front: status and header pass.
    const api = await fetch(`${stack.json.router.http}/api/v4/projects/3`);
    expect([api.status, api.headers.get('retry-after'), await api.json()]).toEqual([
      503,
      '60',
      { message: 'This organization is temporarily unavailable due to maintenance.' },
    ]);

    expect(await orgMover('cancel_maintenance')).toBe(204);
    expect(await orgMover('start_maintenance', { maintenance_reason: 'legal' })).toBe(204);
    expect(await orgMover('confirm_maintenance')).toBe(204);
    const indefinite = await clone('alice');
    expect(indefinite.code).not.toBe(0);
    expect(indefinite.stderr).toContain('This organization is unavailable.');

    expect(await orgMover('exit_maintenance')).toBe(204);
    expect((await clone('alice')).code).toBe(0);
  });
});

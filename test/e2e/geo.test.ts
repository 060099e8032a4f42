import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import { signGeoToken } from '../../mock-cell/geo/token.js';
import { geoPaths, geoSiteName } from '../../stack/geo-plan.js';
import { stackPaths } from '../../stack/layout.js';
import { commitRandomFiles, GIT_IDENTITY, killPushMidTransfer } from '../helpers/interrupted-push.js';
import { waitUntil } from '../helpers/poll.js';
import { listProcesses } from '../helpers/procs.js';
import { run, runOk } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/** The demo's Geo secondary site, of its legacy cell. */
const GEO_CELL = { name: 'cell_us0' };
const GEO_SITE = geoSiteName(GEO_CELL);

/**
 * The Geo secondary of cell_us0 (`stack/geo-plan.ts`): its own SSH entry (a router in `site`
 * mode), Rails, bridge and Gitaly with replicas. Pushes through it land on the primary and
 * replicate back; fetches are served by the replica while it is current and by the primary while
 * it is behind. Real git, real OpenSSH, every service its own process.
 */
let stack: RunningStack;
let work: string;
const PROJECT = 'gitlab-org/gitlab-test';

beforeAll(async () => {
  stack = await startStack();
  work = mkdtempSync(join(tmpdir(), 'geo-e2e-'));
});

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const identity = GIT_IDENTITY;
const site = () => {
  const geo = stack.json.geo[0];
  if (!geo) throw new Error('stack.json has no Geo site');
  return geo;
};
const secondaryUrl = (path: string) => `ssh://git@${site().ssh}/${path}.git`;
const primaryRepo = () => stack.project(PROJECT).repository;
const replicaRepo = () => {
  const primaryStorage = stack.json.cells.find((c) => c.name === 'cell_us0')?.storage as string;
  return join(site().storage, relative(primaryStorage, primaryRepo()));
};

function git(user: string, args: string[], cwd = work, timeoutMs = 120_000) {
  return run('git', args, { cwd, env: { ...stack.gitEnv(user), ...identity }, timeoutMs });
}

const refs = (dir: string) =>
  runOk('git', ['--git-dir', dir, 'for-each-ref', '--format=%(objectname) %(refname)']);

/** Polls an asynchronous condition every 100 ms until it holds, for at most `ms`. */
async function eventually(pred: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const waitReplicated = (ms = 20_000) =>
  eventually(
    async () => (await refs(replicaRepo())) === (await refs(primaryRepo())),
    ms,
    'the replica following the primary',
  );

/** `"rpc":` lines in the primary's mock Gitaly log: one per call it served. */
const primaryGitalyCalls = () =>
  readFileSync(join(stack.dataDir, 'logs', 'gitaly-cell_us0.log'), 'utf8').split('"rpc":').length - 1;

async function replication(method: 'GET' | 'POST', body?: object) {
  const key = jwtKey(readSecretFile(stack.json.secrets.shell));
  const res = await fetch(`${site().rails}/api/v4/internal/_test/geo/replication?project=${PROJECT}`, {
    method,
    headers: { 'gitlab-shell-api-request': await signShellJwt(key), 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { paused: boolean; behind: boolean };
}

let seq = 0;
async function cloneFromSecondary(user: string): Promise<{ dir: string; stderr: string }> {
  const dir = join(work, `${user}-${++seq}`);
  const r = await git(user, ['clone', '-q', secondaryUrl(PROJECT), dir]);
  if (r.code !== 0) throw new Error(`clone failed: ${r.stderr}`);
  return { dir, stderr: r.stderr };
}

async function commitFile(dir: string, file: string, content: string | Buffer, message: string) {
  writeFileSync(join(dir, file), content);
  const env = { ...process.env, ...identity };
  await runOk('git', ['-C', dir, 'add', file], { env });
  await runOk('git', ['-C', dir, 'commit', '-q', '-m', message], { env });
  return (await runOk('git', ['-C', dir, 'rev-parse', 'HEAD'])).trim();
}

const FORWARDED = () => [
  'remote: This request to a Geo secondary node will be forwarded to the',
  'remote: Geo primary node:',
  'remote: ',
  `remote:   ssh://git@${stack.json.router.ssh}/${PROJECT}.git`,
];

/** The primary's bridge up (answering HTTP at all). */
const primaryBridgeUp = () =>
  eventually(
    async () => {
      const bridge = stack.json.cells.find((c) => c.name === 'cell_us0')?.bridge as string;
      return fetch(`${bridge}/-/bridge/health`).then(
        () => true,
        () => false,
      );
    },
    30_000,
    'the primary bridge answering again',
  );

/**
 * Runs `fn` with the primary's bridge dead: its supervisor (the stack's main process) is held with
 * SIGSTOP so it does not start the bridge again until `fn` is done.
 */
async function withPrimaryDown(fn: () => Promise<void>): Promise<void> {
  const config = join(stack.dataDir, 'config', 'bridge-cell_us0.json');
  const bridgePid = listProcesses().find((p) => p.cmdline.includes(config) && p.state !== 'Z')?.pid;
  if (!bridgePid) throw new Error('no bridge process of cell_us0');
  const supervisor = listProcesses().find((p) => p.pid === bridgePid)?.ppid as number;
  process.kill(supervisor, 'SIGSTOP');
  try {
    process.kill(bridgePid, 'SIGKILL');
    await waitUntil(
      () => !listProcesses().some((p) => p.pid === bridgePid && p.state !== 'Z'),
      5_000,
      'the bridge to die',
    );
    await fn();
  } finally {
    process.kill(supervisor, 'SIGCONT');
  }
  await primaryBridgeUp();
}

describe('Geo secondary of cell_us0', () => {
  it('serves a clone while current from its own Gitaly: the primary’s Gitaly sees no call', async () => {
    await waitReplicated();
    const before = primaryGitalyCalls();
    const { dir, stderr } = await cloneFromSecondary('bob');
    expect(stderr).not.toContain('Geo primary node');
    expect(await refs(join(dir, '.git'))).toContain('refs/remotes/origin/main');
    // A call would be logged a moment after it ended: give such a line the time to appear.
    await new Promise((r) => setTimeout(r, 500));
    expect(primaryGitalyCalls()).toBe(before);
  });

  it('carries a push to the primary, shows the Geo console lines, and replicates it back', async () => {
    const { dir } = await cloneFromSecondary('bob');
    await runOk('git', ['-C', dir, 'checkout', '-q', '-b', 'geo/pushed']);
    const sha = await commitFile(dir, 'geo.txt', 'via the secondary\n', 'Push via Geo');
    const r = await git('bob', ['-C', dir, 'push', 'origin', 'geo/pushed']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(FORWARDED().join('\n'));
    expect(r.stderr).toContain('remote: To create a merge request for geo/pushed, visit:');
    expect(await refs(primaryRepo())).toContain(`${sha} refs/heads/geo/pushed`);
    await waitReplicated();
    expect(await refs(replicaRepo())).toContain(`${sha} refs/heads/geo/pushed`);
  });

  it('passes on the primary’s refusal of a Developer’s push to protected main; no site changes', async () => {
    const primaryBefore = await refs(primaryRepo());
    const replicaBefore = await refs(replicaRepo());
    const { dir } = await cloneFromSecondary('john.doe');
    await commitFile(dir, 'main.txt', 'not for main\n', 'Developer on main');
    const r = await git('john.doe', ['-C', dir, 'push', 'origin', 'main']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Geo primary node:');
    expect(r.stderr).toContain('You are not allowed to push code to protected branches on this project.');
    expect(await refs(primaryRepo())).toBe(primaryBefore);
    expect(await refs(replicaRepo())).toBe(replicaBefore);
  });

  it('sends a fetch to the primary while the replica is behind, then catches up', async () => {
    const { dir: reader } = await cloneFromSecondary('bob');
    const { dir: writer } = await cloneFromSecondary('bob');
    expect((await replication('POST', { paused: true })).paused).toBe(true);
    try {
      const sha = await commitFile(writer, 'behind.txt', 'newer than the replica\n', 'Not replicated yet');
      const push = await git('bob', ['-C', writer, 'push', 'origin', 'HEAD:refs/heads/geo/behind']);
      expect(push.code, push.stderr).toBe(0);
      await eventually(
        async () => (await replication('GET')).behind,
        10_000,
        'the secondary knowing it is behind',
      );
      expect(await refs(replicaRepo())).not.toContain(sha);
      const before = primaryGitalyCalls();
      const fetched = await git('bob', ['-C', reader, 'fetch', 'origin']);
      expect(fetched.code, fetched.stderr).toBe(0);
      expect(fetched.stderr).toContain(FORWARDED().join('\n'));
      expect((await runOk('git', ['-C', reader, 'rev-parse', 'origin/geo/behind'])).trim()).toBe(sha);
      // The log line is written once the call has ended, a moment after the client has its pack.
      await eventually(async () => primaryGitalyCalls() > before, 5_000, 'a call in the primary Gitaly log');
    } finally {
      await replication('POST', { paused: false });
    }
    await waitReplicated();
    expect((await replication('GET')).behind).toBe(false);
  });

  it('answers forged, expired and wrong-scope GL-Geo tokens at the primary with a fast 401, body unread', async () => {
    const g = geoPaths(stackPaths(stack.dataDir), GEO_CELL);
    const node = {
      site: GEO_SITE,
      accessKey: `${GEO_SITE}-access-key`,
      secret: jwtKey(readSecretFile(g.secondarySecret)),
    };
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      [
        await signGeoToken({ ...node, secret: jwtKey('guessed') }, { scope: PROJECT, gl_id: 'user-3' }),
        'Bad token',
      ],
      [await signGeoToken(node, { scope: PROJECT, gl_id: 'user-3' }, now - 600), 'Invalid signature time '],
      [await signGeoToken(node, { scope: 'gitlab-org/gitlab', gl_id: 'user-3' }), 'Unauthorized scope'],
    ] as const;
    const bridge = stack.json.cells.find((c) => c.name === 'cell_us0')?.bridge as string;
    for (const [authorization, reason] of cases) {
      const started = Date.now();
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(`${bridge}/${PROJECT}.git/ssh-receive-pack`, {
          method: 'POST',
          headers: { authorization },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
        });
        // A body that never ends: the answer must not wait for it.
        req.write(randomBytes(64 * 1024));
      });
      expect(answer).toEqual({ status: 401, text: `Geo JWT authentication failed: ${reason}` });
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it('changes no refs on either site and leaves no git process when the push client is killed mid-transfer', async () => {
    const primaryBefore = await refs(primaryRepo());
    const replicaBefore = await refs(replicaRepo());
    const { dir } = await cloneFromSecondary('bob');
    await commitRandomFiles(dir, 'geo/interrupted', 30);
    await killPushMidTransfer(stack, 'bob', dir, 'geo/interrupted', 10_000);
    expect(await refs(primaryRepo())).toBe(primaryBefore);
    expect(await refs(replicaRepo())).toBe(replicaBefore);
  });

  it('with the primary down: a clear error for a push, and the secondary keeps serving reads', async () => {
    await waitReplicated();
    await withPrimaryDown(async () => {
      const { dir } = await cloneFromSecondary('bob');
      expect(await refs(join(dir, '.git'))).toContain('refs/remotes/origin/geo/pushed');
      await commitFile(dir, 'down.txt', 'primary is down\n', 'Cannot land');
      const r = await git('bob', ['-C', dir, 'push', 'origin', 'HEAD:refs/heads/geo/down']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Geo primary node:');
      expect(r.stderr).toContain('remote: ERROR: Remote repository is unavailable');
      expect(await refs(primaryRepo())).not.toContain('refs/heads/geo/down');
    });
  });

  it('catches up a replica whose fetches failed while the primary was down, once it is back', async () => {
    const { dir } = await cloneFromSecondary('bob');
    const sha = await commitFile(dir, 'later.txt', 'replicated after the outage\n', 'After the outage');
    await replication('POST', { paused: true });
    const push = await git('bob', ['-C', dir, 'push', 'origin', 'HEAD:refs/heads/geo/after-outage']);
    expect(push.code, push.stderr).toBe(0);
    await eventually(
      async () => (await replication('GET')).behind,
      10_000,
      'the secondary knowing it is behind',
    );
    await withPrimaryDown(async () => {
      await replication('POST', { paused: false });
      // Every try of the sync fails meanwhile (5 tries, 0.3 s × attempt apart).
      await new Promise((r) => setTimeout(r, 4_000));
      expect((await replication('GET')).behind).toBe(true);
    });
    // The catch-up timer (10 s) fetches again once the primary answers.
    await waitReplicated(40_000);
    expect(await refs(replicaRepo())).toContain(`${sha} refs/heads/geo/after-outage`);
  }, 90_000);
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { run, runOk } from '../helpers/run.js';
import type { RunningStack } from '../helpers/stack.js';

/** One kind of operation of the mix; `denied` ones must be refused. */
export interface OpKind {
  id: string;
  user: string;
  project: string;
  kind: 'clone' | 'fetch' | 'push' | 'archive';
  denied?: boolean;
}

/** The mix, over every cell that holds a project (cell_us0, cell_us1, cell_eu0), including refusals. */
export const MIX: OpKind[] = [
  {
    id: 'clone alice my-company/my-project (eu0)',
    user: 'alice',
    project: 'my-company/my-project',
    kind: 'clone',
  },
  { id: 'clone bob gitlab-org/gitlab (us0)', user: 'bob', project: 'gitlab-org/gitlab', kind: 'clone' },
  { id: 'clone carol john.doe/notes (eu0)', user: 'carol', project: 'john.doe/notes', kind: 'clone' },
  { id: 'clone dave acme.corp/www.site (us1)', user: 'dave', project: 'acme.corp/www.site', kind: 'clone' },
  { id: 'fetch alice my-company/my-project', user: 'alice', project: 'my-company/my-project', kind: 'fetch' },
  { id: 'push alice my-company/my-project', user: 'alice', project: 'my-company/my-project', kind: 'push' },
  {
    id: 'push bob gitlab-org/gitlab-test (us0)',
    user: 'bob',
    project: 'gitlab-org/gitlab-test',
    kind: 'push',
  },
  {
    id: 'push root not-my-company/not-my-project (us1)',
    user: 'root',
    project: 'not-my-company/not-my-project',
    kind: 'push',
  },
  { id: 'archive bob gitlab-org/gitlab', user: 'bob', project: 'gitlab-org/gitlab', kind: 'archive' },
  { id: 'fetch dave my-company/my-project', user: 'dave', project: 'my-company/my-project', kind: 'fetch' },
  // Refusals: a private project of which alice is no member, and a Reporter's push.
  {
    id: 'denied: clone alice my-company/my-other-project',
    user: 'alice',
    project: 'my-company/my-other-project',
    kind: 'clone',
    denied: true,
  },
  {
    id: 'denied: push carol my-company/my-project',
    user: 'carol',
    project: 'my-company/my-project',
    kind: 'push',
    denied: true,
  },
];

export interface OpResult {
  id: string;
  ok: boolean;
  ms: number;
  error?: string;
  /** A push that succeeded: where its commit must be. */
  pushed?: { bare: string; branch: string; sha: string };
}

const LOCAL_GIT = ['-c', 'user.name=Soak', '-c', 'user.email=soak@example.com'];

/** Runs operations of the mix against a stack, keeping one working clone per user and project. */
export class Workload {
  private readonly clones = new Map<string, Promise<string>>();
  /** One operation at a time per working clone (git's index and ref locks). */
  private readonly locks = new Map<string, Promise<unknown>>();
  private n = 0;

  constructor(
    private readonly stack: RunningStack,
    private readonly work: string,
  ) {}

  /** The working clone of `user`/`project` (made on first use). */
  private workingClone(user: string, project: string): Promise<string> {
    const key = `${user}:${project}`;
    let dir = this.clones.get(key);
    if (!dir) {
      const target = join(this.work, 'clones', key.replace(/[/:]/g, '_'));
      dir = runOk('git', ['clone', '-q', this.stack.url(project), target], {
        env: this.stack.gitEnv(user),
      }).then(() => target);
      this.clones.set(key, dir);
    }
    return dir;
  }

  async run(op: OpKind): Promise<OpResult> {
    const started = Date.now();
    const tag = `${process.pid}-${++this.n}`;
    try {
      const uses = op.kind === 'fetch' || op.kind === 'push' ? `${op.user}:${op.project}` : undefined;
      const r = uses ? await this.serially(uses, () => this.once(op, tag)) : await this.once(op, tag);
      return { id: op.id, ok: true, ms: Date.now() - started, ...r };
    } catch (err) {
      return { id: op.id, ok: false, ms: Date.now() - started, error: (err as Error).message.slice(0, 300) };
    }
  }

  private async once(op: OpKind, tag: string): Promise<Pick<OpResult, 'pushed'>> {
    const env = this.stack.gitEnv(op.user);
    const url = this.stack.url(op.project);
    if (op.denied) {
      const cwd = await this.deniedCwd(op);
      const args =
        op.kind === 'push'
          ? ['push', '-q', url, `HEAD:refs/heads/soak-denied-${tag}`]
          : ['clone', '-q', url, join(this.work, `denied-${tag}`)];
      const r = await run('git', args, { env, cwd, timeoutMs: 120_000 });
      if (r.code === 0) throw new Error(`${op.id} was allowed`);
      if (!/ERROR|denied|not found|not allowed/i.test(r.stderr))
        throw new Error(`refused without a message: ${r.stderr}`);
      return {};
    }
    if (op.kind === 'clone') {
      const target = join(this.work, `clone-${tag}`);
      try {
        await runOk('git', ['clone', '-q', url, target], { env, timeoutMs: 120_000 });
      } finally {
        await rm(target, { recursive: true, force: true });
      }
      return {};
    }
    const dir = await this.workingClone(op.user, op.project);
    if (op.kind === 'fetch') {
      await runOk('git', ['-C', dir, 'fetch', '-q', 'origin'], { env, timeoutMs: 120_000 });
      return {};
    }
    if (op.kind === 'archive') {
      const r = await run('git', ['archive', `--remote=${url}`, '--format=tar', 'HEAD'], {
        env,
        timeoutMs: 120_000,
      });
      if (r.code !== 0 || r.stdout.length < 512) throw new Error(`archive failed: ${r.stderr}`);
      return {};
    }
    const branch = `soak-${tag}`;
    await runOk('git', ['-C', dir, 'checkout', '-q', '-B', branch, 'origin/HEAD'], { env });
    writeFileSync(join(dir, 'soak.txt'), `${branch}\n`);
    await runOk('git', ['-C', dir, 'add', 'soak.txt'], { env });
    await runOk('git', ['-C', dir, ...LOCAL_GIT, 'commit', '-q', '-m', branch], { env });
    const sha = (await runOk('git', ['-C', dir, 'rev-parse', 'HEAD'], { env })).trim();
    await runOk('git', ['-C', dir, 'push', '-q', 'origin', `HEAD:refs/heads/${branch}`], {
      env,
      timeoutMs: 120_000,
    });
    const bare = this.stack.project(op.project).repository;
    const there = (await runOk('git', ['--git-dir', bare, 'rev-parse', `refs/heads/${branch}`])).trim();
    if (there !== sha) throw new Error(`pushed ${sha} but ${branch} is ${there}`);
    return { pushed: { bare, branch, sha } };
  }

  private async serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(key) ?? Promise.resolve();
    const mine = before.then(fn, fn);
    this.locks.set(
      key,
      mine.catch(() => undefined),
    );
    return mine;
  }

  /** Where a refused operation runs: a push needs a repository with a commit (carol's clone). */
  private async deniedCwd(op: OpKind): Promise<string> {
    if (op.kind !== 'push') return this.work;
    mkdirSync(this.work, { recursive: true });
    return this.workingClone(op.user, op.project);
  }
}

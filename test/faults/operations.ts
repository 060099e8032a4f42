import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { demoWorld } from '../../stack/topology-file-load.js';
import { run, runOk } from '../helpers/run.js';
import { type FaultWorld, type GitRun, LARGE_PROJECT, PUSH_PROJECT, USER } from './world.js';

/**
 * One row of the matrix: a git operation on the large repository through the router — over SSH
 * (the router's tunnel to the bridge) or, for `http` rows, over HTTP (the router's HTTP front →
 * the bridge's git routes).
 */
export interface Operation {
  id: string;
  label: string;
  /** Git over HTTP through the router's HTTP front (default: over SSH). */
  http?: boolean;
  /** Starts the operation; `tag` is unique per attempt; `via` is the router (`host:port`, of SSH or HTTP). */
  start(world: FaultWorld, tag: string, via?: string): GitRun;
  /** Whether a finished attempt did everything it should (all objects, the pushed ref, the tar). */
  verify(world: FaultWorld, tag: string): Promise<string | undefined>;
  /** After a push: removes the branch it made and its objects from the bare repository. */
  clean?(world: FaultWorld, tag: string): Promise<void>;
  /** Receive-pack: the bare repository whose refs must not change when the push is interrupted. */
  pushes?: string;
}

const dir = (world: FaultWorld, tag: string) => join(world.work, 'runs', tag);

/** ssh://…/<path>.git through the router named by `viaSsh` (`host:port`, default the learn router). */
function url(world: FaultWorld, path: string, viaSsh?: string): string {
  return viaSsh ? `ssh://git@${viaSsh}/${path}.git` : world.stack.url(path);
}

/** http://USER:<password>@<router's HTTP front, or `viaHttp`>/<path>.git. */
function httpUrl(world: FaultWorld, path: string, viaHttp?: string): string {
  const password = demoWorld().users.find((u) => u.username === USER)?.password ?? '';
  const front = viaHttp ?? new URL(world.stack.json.router.http).host;
  return `http://${USER}:${encodeURIComponent(password)}@${front}/${path}.git`;
}

/** git's environment for HTTP: no prompt for credentials. */
const httpEnv = (world: FaultWorld) => ({ ...world.stack.gitEnv(USER), GIT_TERMINAL_PROMPT: '0' });

async function revParse(gitDir: string, ref: string): Promise<string | undefined> {
  const r = await run('git', ['--git-dir', gitDir, 'rev-parse', '--verify', '-q', ref]);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

function clone(version: 0 | 2): Operation {
  return {
    id: `clone-v${version}`,
    label: `clone (protocol v${version})`,
    start: (world, tag, viaSsh) =>
      world.git([
        '-c',
        `protocol.version=${version}`,
        'clone',
        '-q',
        '--bare',
        url(world, LARGE_PROJECT, viaSsh),
        dir(world, tag),
      ]),
    verify: async (world, tag) => {
      const head = await revParse(dir(world, tag), 'refs/heads/main');
      return head === world.large.head ? undefined : `cloned main is ${head}, not ${world.large.head}`;
    },
  };
}

/** `clone-http`: a bare clone (protocol v2) over HTTP through the router's HTTP front. */
const cloneHttp: Operation = {
  id: 'clone-http',
  label: 'clone over HTTP (protocol v2)',
  http: true,
  start: (world, tag, via) =>
    world.git(
      [
        '-c',
        'protocol.version=2',
        'clone',
        '-q',
        '--bare',
        httpUrl(world, LARGE_PROJECT, via),
        dir(world, tag),
      ],
      {
        env: httpEnv(world),
      },
    ),
  verify: async (world, tag) => {
    const head = await revParse(dir(world, tag), 'refs/heads/main');
    return head === world.large.head ? undefined : `cloned main is ${head}, not ${world.large.head}`;
  },
};

const fetch: Operation = {
  id: 'fetch',
  label: 'fetch (v2, into an empty repository)',
  start: (world, tag, viaSsh) => {
    mkdirSync(dir(world, tag), { recursive: true });
    return world.git(['fetch', '-q', url(world, LARGE_PROJECT, viaSsh), 'main'], {
      cwd: initBare(dir(world, tag)),
    });
  },
  verify: async (world, tag) => {
    const head = await revParse(dir(world, tag), 'FETCH_HEAD');
    return head === world.large.head ? undefined : `FETCH_HEAD is ${head}, not ${world.large.head}`;
  },
};

/** `git init --bare`, synchronously: `start` stays synchronous, so the fault's clock starts with git. */
function initBare(folder: string): string {
  if (spawnSync('git', ['init', '-q', '--bare', folder], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`git init ${folder} failed`);
  }
  return folder;
}

const branch = (tag: string) => `faults-${tag}`;

/** A push of a new branch with the large history: over SSH, or over HTTP. */
function pushOp(http: boolean): Operation {
  return {
    id: http ? 'push-http' : 'push',
    ...(http ? { http } : {}),
    pushes: PUSH_PROJECT,
    label: `push${http ? ' over HTTP' : ''} (a new branch of the large history)`,
    start: (world, tag, via) =>
      world.git(
        [
          'push',
          '-q',
          http ? httpUrl(world, PUSH_PROJECT, via) : url(world, PUSH_PROJECT, via),
          `main:refs/heads/${branch(tag)}`,
        ],
        { cwd: join(world.work, 'pusher.git'), ...(http ? { env: httpEnv(world) } : {}) },
      ),
    verify: async (world, tag) => {
      const head = await revParse(world.repository(PUSH_PROJECT), `refs/heads/${branch(tag)}`);
      return head === world.large.head ? undefined : `pushed branch is ${head}, not ${world.large.head}`;
    },
    clean: async (world, tag) => {
      const bare = world.repository(PUSH_PROJECT);
      if (await revParse(bare, `refs/heads/${branch(tag)}`)) {
        await runOk('git', ['--git-dir', bare, 'update-ref', '-d', `refs/heads/${branch(tag)}`]);
        // Drop the pushed objects, so the next push sends the whole history again.
        await runOk('git', ['--git-dir', bare, '-c', 'gc.reflogExpire=now', 'reflog', 'expire', '--all']);
        await runOk('git', ['--git-dir', bare, 'repack', '-a', '-d', '-q']);
        await runOk('git', ['--git-dir', bare, 'prune', '--expire=now']);
      }
    },
  };
}

const archive: Operation = {
  id: 'archive',
  label: 'archive (git archive --remote, tar)',
  start: (world, tag, viaSsh) => {
    mkdirSync(dir(world, tag), { recursive: true });
    return world.git(['archive', `--remote=${url(world, LARGE_PROJECT, viaSsh)}`, '--format=tar', 'main'], {
      stdoutFile: join(dir(world, tag), 'out.tar'),
    });
  },
  verify: async (world, tag) => {
    const file = join(dir(world, tag), 'out.tar');
    const size = existsSync(file) ? statSync(file).size : 0;
    const least = world.large.spec.files * world.large.spec.fileBytes;
    return size >= least ? undefined : `tar has ${size} bytes, less than the ${least} of the files`;
  },
};

/** Removes an attempt's client-side folder (a clone of the large repository each). */
export async function removeAttempt(world: FaultWorld, tag: string): Promise<void> {
  await rm(dir(world, tag), { recursive: true, force: true });
}

export const OPERATIONS: Operation[] = [
  clone(2),
  clone(0),
  fetch,
  pushOp(false),
  archive,
  cloneHttp,
  pushOp(true),
];

/** What an interrupted receive-pack may leave in a bare repository: quarantine and temporary packs. */
export function quarantineLeftovers(bare: string): string[] {
  const objects = join(bare, 'objects');
  const found = readdirSync(objects).filter((n) => n.startsWith('tmp_objdir') || n.startsWith('incoming-'));
  const pack = join(objects, 'pack');
  if (existsSync(pack)) found.push(...readdirSync(pack).filter((n) => n.startsWith('tmp_')));
  return found;
}

/** `for-each-ref` of a bare repository: name and object of every ref. */
export async function refsOf(bare: string): Promise<string> {
  return runOk('git', ['--git-dir', bare, 'for-each-ref', '--format=%(refname) %(objectname)']);
}

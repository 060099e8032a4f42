import { createCipheriv, createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { type HistoryCommit, type HistoryShape, historyCommits } from './history-gen.js';
import { mustRun, track, waitExit } from './proc.js';

/**
 * Deterministic benchmark repositories, written with `git fast-import` from a seeded PRNG (the
 * AES-128-CTR keystream of SHA-256(seed)) so their content is incompressible and identical on every
 * machine. Each is generated once and cached under the data folder, keyed by its spec.
 */
export interface RepoSpec {
  /** Cache name prefix, e.g. "large". */
  name: string;
  seed: string;
  files: number;
  fileBytes: number;
  filesPerCommit: number;
  /** Hex text lines (compressible, like source code) instead of random binary. */
  text: boolean;
  /**
   * A realistic history instead (bench/history-gen.ts): `files` source-like text files of about
   * `fileBytes`, then many commits editing them (`filesPerCommit` and `text` are not used).
   */
  history?: HistoryShape;
}

export interface GeneratedRepo {
  spec: RepoSpec;
  /** Bare repository folder. */
  dir: string;
  /** The generated branch and its tip. */
  branch: string;
  head: string;
  packBytes: number;
}

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  LANG: 'C',
};

function gitEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: '/nonexistent', ...GIT_ENV };
}

async function git(dir: string, args: string[], timeoutMs = 30 * 60_000): Promise<string> {
  const r = await mustRun('git', ['-C', dir, ...args], { env: gitEnv(), timeoutMs, keepStdout: true });
  return r.stdout.trim();
}

/** Keystream of a seed: the same bytes for the same seed, as many as asked, in order. */
export function keystream(seed: string): (bytes: number) => Buffer {
  const key = createHash('sha256').update(seed).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  return (bytes) => cipher.update(Buffer.alloc(bytes));
}

/** One file's content: raw keystream bytes, or hex lines of 64 characters when `text`. */
export function fileContent(
  next: (bytes: number) => Buffer,
  spec: Pick<RepoSpec, 'fileBytes' | 'text'>,
): Buffer {
  if (!spec.text) return next(spec.fileBytes);
  const hex = next(Math.ceil(spec.fileBytes / 2))
    .toString('hex')
    .slice(0, spec.fileBytes);
  return Buffer.from(hex.replace(/(.{64})/g, '$1\n'));
}

function specKey(spec: RepoSpec, base?: GeneratedRepo): string {
  const h = createHash('sha256').update(JSON.stringify({ spec, base: base?.head, v: 2 }));
  return `${spec.name}-${h.digest('hex').slice(0, 10)}.git`;
}

async function packBytes(dir: string): Promise<number> {
  const packDir = join(dir, 'objects', 'pack');
  let total = 0;
  for (const f of await readdir(packDir)) {
    if (f.endsWith('.pack')) total += (await stat(join(packDir, f))).size;
  }
  return total;
}

function write(stream: Writable, data: Buffer | string): Promise<void> {
  return stream.write(data) ? Promise.resolve() : new Promise((r) => stream.once('drain', () => r()));
}

/** The commits of an incompressible (or hex text) spec: `filesPerCommit` new files per commit. */
function* flatCommits(spec: RepoSpec): Generator<HistoryCommit> {
  const next = keystream(spec.seed);
  for (let done = 0; done < spec.files; ) {
    const inCommit = Math.min(spec.filesPerCommit, spec.files - done);
    const files: HistoryCommit['files'] = [];
    for (let i = 0; i < inCommit; i++, done++) {
      const dirName = `d${String(Math.floor(done / 256)).padStart(3, '0')}`;
      const path = `data/${dirName}/f${String(done).padStart(6, '0')}.${spec.text ? 'txt' : 'bin'}`;
      files.push({ path, content: fileContent(next, spec) });
    }
    yield { message: `Add files ${done - inCommit}..${done - 1}\n`, files };
  }
}

function commitsOf(spec: RepoSpec): Iterable<HistoryCommit> {
  return spec.history
    ? historyCommits({ ...spec, history: spec.history }, keystream(spec.seed))
    : flatCommits(spec);
}

/** Streams the commits of `spec` into `git fast-import` running in `dir`, on `branch` (after `from`). */
async function fastImport(
  dir: string,
  spec: RepoSpec,
  branch: string,
  from: string | undefined,
): Promise<void> {
  // unpackLimit 0: always write a pack, even for a handful of objects (never loose objects).
  const child = track(
    'git',
    ['-C', dir, '-c', 'fastimport.unpackLimit=0', 'fast-import', '--quiet', '--done'],
    {
      env: gitEnv(),
      stdio: ['pipe', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4096);
  });
  const stdin = child.stdin;
  if (!stdin) throw new Error('git fast-import has no stdin');
  let broken: Error | undefined;
  stdin.on('error', (err) => {
    broken = err;
  });
  let clock = Date.UTC(2026, 0, 1) / 1000;
  let mark = 0;
  let first = true;
  for (const c of commitsOf(spec)) {
    if (broken) break;
    const entries: string[] = [];
    for (const f of c.files) {
      mark++;
      await write(stdin, `blob\nmark :${mark}\ndata ${f.content.length}\n`);
      await write(stdin, f.content);
      await write(stdin, '\n');
      entries.push(`M 100644 :${mark} ${f.path}\n`);
    }
    clock += 60;
    const who = `Bench <bench@example.com> ${clock} +0000`;
    let commit = `commit refs/heads/${branch}\nauthor ${who}\ncommitter ${who}\ndata ${Buffer.byteLength(c.message)}\n${c.message}`;
    if (first && from) commit += `from ${from}\n`;
    first = false;
    await write(stdin, `${commit}${entries.join('')}\n`);
  }
  await write(stdin, 'done\n');
  stdin.end();
  const ok = await waitExit(child, 60 * 60_000);
  if (!ok || child.exitCode !== 0 || broken) {
    throw new Error(
      `git fast-import failed (exit ${child.exitCode}): ${broken?.message ?? ''} ${stderr.trim()}`,
    );
  }
}

/**
 * The cached repository of `spec`, generated when missing. With `base`, the result is a copy of
 * `base` plus the generated commits on `branch`, made on top of base's tip (new objects only).
 */
export async function ensureRepo(
  cacheDir: string,
  spec: RepoSpec,
  opts: { branch?: string; base?: GeneratedRepo; log?: (line: string) => void } = {},
): Promise<GeneratedRepo> {
  const branch = opts.branch ?? 'main';
  const dir = join(cacheDir, specKey(spec, opts.base));
  const marker = join(dir, 'bench-complete');
  if (!existsSync(marker)) {
    opts.log?.(
      `generating ${spec.name} repository (${((spec.files * spec.fileBytes) / 2 ** 20).toFixed(0)} MiB) in ${dir}`,
    );
    await rm(dir, { recursive: true, force: true });
    await mkdir(cacheDir, { recursive: true });
    if (opts.base) {
      await mustRun('git', ['clone', '-q', '--bare', '--no-local', opts.base.dir, dir], {
        env: gitEnv(),
        timeoutMs: 30 * 60_000,
      });
      await git(dir, ['remote', 'remove', 'origin']).catch(() => undefined);
      await fastImport(dir, spec, branch, opts.base.head);
    } else {
      await mustRun('git', ['init', '-q', '--bare', '--initial-branch=main', dir], {
        env: gitEnv(),
        timeoutMs: 60_000,
      });
      await fastImport(dir, spec, branch, undefined);
      // One pack with a bitmap, as a served repository would have after housekeeping; a history
      // gets its deltas found anew (-f, git's default depth and window), as `git gc` would.
      await git(dir, ['repack', '-a', '-d', '-b', '-q', ...(spec.history ? ['-f'] : [])]);
    }
    await git(dir, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
    await writeFile(marker, `${JSON.stringify(spec)}\n`);
  }
  return {
    spec,
    dir,
    branch,
    head: await git(dir, ['rev-parse', `refs/heads/${branch}`]),
    packBytes: await packBytes(dir),
  };
}

/**
 * Places a copy of `repo` at `target` (a project's path in a storage) sharing the object files by
 * hard links (`git clone --bare --local`), so even the 1 GiB repository is placed instantly.
 */
export async function placeRepo(repo: GeneratedRepo, target: string): Promise<void> {
  await rm(target, { recursive: true, force: true });
  await mkdir(join(target, '..'), { recursive: true });
  await mustRun('git', ['clone', '-q', '--bare', '--local', repo.dir, target], {
    env: gitEnv(),
    timeoutMs: 10 * 60_000,
  });
  await git(target, ['remote', 'remove', 'origin']).catch(() => undefined);
  await git(target, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
}

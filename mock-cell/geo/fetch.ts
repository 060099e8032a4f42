import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The secondary's replication fetch: real `git fetch` into the replica through the primary's
 * SSH-over-HTTP tunnel (`relay-main.ts` as git's `ext::` command → primary bridge → primary Rails'
 * GL-Geo pre-authorization → primary Gitaly's upload-pack), mirroring every ref (`+refs/*:refs/*`,
 * `--prune`). Protocol v0, whose upload-pack exits after sending the pack.
 */
export type RefMap = Record<string, string>;

export const FETCH_TIMEOUT_MS = 60_000;

const RELAY = fileURLToPath(new URL('./relay-main.js', import.meta.url));

function gitEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return { ...env, ...extra };
}

/** ext:: splits its command at spaces; `% ` is a literal space. */
const extArg = (s: string) => s.replace(/%/g, '%%').replace(/ /g, '% ');

function git(what: string, args: string[], env: NodeJS.ProcessEnv, timeout: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { env: gitEnv(env), timeout, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${what} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

export async function fetchFromPrimary(repoDir: string, primaryRepo: string, authorization: string) {
  const remote = `ext::${extArg(process.execPath)} ${extArg(RELAY)} %S ${extArg(primaryRepo)}`;
  await git(
    'fetch',
    [
      '--git-dir',
      repoDir,
      '-c',
      'protocol.ext.allow=always',
      '-c',
      'protocol.version=0',
      'fetch',
      '--quiet',
      '--prune',
      remote,
      '+refs/*:refs/*',
    ],
    { GEO_AUTHORIZATION: authorization },
    FETCH_TIMEOUT_MS,
  );
}

/** Every ref of a repository and the object it points at. */
export async function readRefs(repoDir: string): Promise<RefMap> {
  const out = await git(
    'for-each-ref',
    ['--git-dir', repoDir, 'for-each-ref', '--format=%(objectname) %(refname)'],
    {},
    10_000,
  );
  const refs: RefMap = {};
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) refs[line.slice(space + 1)] = line.slice(0, space);
  }
  return refs;
}

export function sameRefs(a: RefMap, b: RefMap): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

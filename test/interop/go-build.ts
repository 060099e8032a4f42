import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Go test peers in this folder (one `package main` each). */
export type GoProgram = 'gitaly-server' | 'workhorse-client';

/** Debian bookworm packages that provide everything the peers need, offline. */
export const GO_PACKAGES = ['golang-1.19-go', 'golang-github-hashicorp-yamux-dev', 'golang-google-grpc-dev'];
export const GO_INSTALL_HINT = `apt-get install ${GO_PACKAGES.join(' ')}`;

const DEBIAN_GO = '/usr/lib/go-1.19/bin/go';
const DEBIAN_GOPATH = '/usr/share/gocode';
/** Import paths the peers use besides the standard library (x/net comes with grpc). */
const REQUIRED_PACKAGES = ['github.com/hashicorp/yamux', 'google.golang.org/grpc', 'golang.org/x/net/http2'];
const BUILD_TIMEOUT_MS = 5 * 60_000;

const here = dirname(fileURLToPath(import.meta.url));

export interface GoToolchain {
  /** The go command. */
  go: string;
  /** GOPATH for GOPATH-mode builds (GO111MODULE=off); holds the Debian library sources. */
  gopath: string;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Go toolchain for building the peers: `go` from PATH, else Debian's `/usr/lib/go-1.19/bin/go`,
 * plus a GOPATH ($GOPATH entries, then /usr/share/gocode) that holds yamux, grpc and x/net.
 * Undefined when either the compiler or one of the libraries is missing.
 */
export function goToolchain(): GoToolchain | undefined {
  const fromPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'go'))
    .find(isExecutable);
  const go = fromPath ?? (isExecutable(DEBIAN_GO) ? DEBIAN_GO : undefined);
  if (go === undefined) return undefined;
  const roots = [...(process.env.GOPATH ?? '').split(delimiter).filter((p) => p !== ''), DEBIAN_GOPATH];
  const complete = REQUIRED_PACKAGES.every((pkg) => roots.some((root) => existsSync(join(root, 'src', pkg))));
  if (!complete) return undefined;
  return { go, gopath: roots.join(delimiter) };
}

let outDir: string | undefined;
const builds = new Map<GoProgram, Promise<string>>();

function buildDir(): string {
  if (outDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'interop-go-'));
    outDir = dir;
    // Backup only: vitest may end its workers without an 'exit' event; call removeGoBuilds().
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return outDir;
}

/**
 * Removes the built binaries and forgets them (a later buildGoProgram builds again, quickly from
 * Go's build cache). Call it from afterAll once no peer process runs any more.
 */
export async function removeGoBuilds(): Promise<void> {
  const pending = [...builds.values()];
  builds.clear();
  await Promise.allSettled(pending);
  const dir = outDir;
  outDir = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}

function compile(name: GoProgram, toolchain: GoToolchain): Promise<string> {
  const out = join(buildDir(), name);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GO111MODULE: 'off',
    GOPATH: toolchain.gopath,
    GOFLAGS: '',
    // Pure-Go net package: no C compiler needed.
    CGO_ENABLED: '0',
  };
  // Go's build cache defaults to $XDG_CACHE_HOME or $HOME/.cache; give it a place without either.
  if (!env.GOCACHE && !env.XDG_CACHE_HOME && !env.HOME) env.GOCACHE = join(tmpdir(), 'interop-go-cache');
  return new Promise((resolve, reject) => {
    execFile(
      toolchain.go,
      ['build', '-o', out, '.'],
      { cwd: join(here, name), env, timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(
              `go build of test/interop/${name} failed (${err.message.split('\n')[0]}):\n${stderr}${stdout}`,
            ),
          );
        } else {
          resolve(out);
        }
      },
    );
  });
}

/**
 * Builds one peer into a temporary folder (see removeGoBuilds) and returns the binary's path. Builds are cached per process; a failed build throws the compiler output.
 */
export function buildGoProgram(name: GoProgram): Promise<string> {
  const cached = builds.get(name);
  if (cached) return cached;
  const toolchain = goToolchain();
  if (toolchain === undefined) {
    return Promise.reject(new Error(`go toolchain not installed: ${GO_INSTALL_HINT}`));
  }
  const build = compile(name, toolchain);
  builds.set(name, build);
  build.catch(() => builds.delete(name));
  return build;
}

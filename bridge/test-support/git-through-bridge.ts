import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GIT_ENV } from './harness.js';

/** `GIT_SSH_COMMAND` stand-in that POSTs git's stdin to the bridge's tunnel routes (as GitLab Shell does). */
export const TUNNEL_HELPER = fileURLToPath(new URL('./git-ssh-tunnel.mjs', import.meta.url));

export interface GitThroughBridge {
  /** The bridge's base URL. */
  url: string;
  /** A shell JWT (`Gitlab-Shell-Api-Request`). */
  token: string;
  protocol: 'h1' | 'h2';
  framed: boolean;
  cwd: string;
  /** git's wire protocol version (`-c protocol.version=…`), default 2. */
  version?: 0 | 1 | 2;
  timeoutMs?: number;
}

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs real git with the tunnel helper as its ssh; resolves with its exit code and output. */
export function gitThroughBridge(args: string[], opts: GitThroughBridge): Promise<GitResult> {
  const env = {
    ...GIT_ENV,
    GIT_SSH_COMMAND: `${process.execPath} ${TUNNEL_HELPER}`,
    BRIDGE_TUNNEL_URL: opts.url,
    BRIDGE_TUNNEL_TOKEN: opts.token,
    BRIDGE_TUNNEL_PROTOCOL: opts.protocol,
    BRIDGE_TUNNEL_FRAMED: opts.framed ? '1' : '0',
  };
  const argv = ['-c', 'ssh.variant=ssh', '-c', `protocol.version=${opts.version ?? 2}`, ...args];
  return new Promise((resolve) => {
    execFile(
      'git',
      argv,
      { env, cwd: opts.cwd, timeout: opts.timeoutMs ?? 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

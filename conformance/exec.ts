/**
 * @file Runs git or ssh as a world's user against the router under test and collects the outcome
 * (never rejects on a non-zero exit; killed after `timeoutMs`).
 */
import { spawn } from 'node:child_process';

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function exec(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
  input?: string,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
  });
}

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';

/** A running `gitaly-server` peer. */
export interface GoServer {
  proc: ChildProcess;
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/** Starts gitaly-server and waits for its `LISTENING <addr>` line. */
export function startServer(bin: string, args: string[]): Promise<GoServer> {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, ['-listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const server: Omit<GoServer, 'port'> = {
      proc,
      log: () => stderr,
      async stop() {
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGTERM');
          const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
      },
    };
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`gitaly-server did not print LISTENING within 10 s; stderr:\n${stderr}`));
    }, 10_000);
    proc.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    proc.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
      const m = /^LISTENING 127\.0\.0\.1:(\d+)$/m.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve({ ...server, port: Number(m[1]) });
      }
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`gitaly-server exited (${code ?? signal}) before listening; stderr:\n${stderr}`));
    });
  });
}

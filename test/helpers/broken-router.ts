/**
 * Starts the broken router double (`test/conformance/doubles/broken-router.ts`, compiled from the
 * sources by `compilePrograms`: `program` is its `path()`) against a running world: its own process, every listener on port 0; `stop()` ends it by its PID
 * (SIGTERM, then SIGKILL) and resolves once it has exited.
 */
import { spawn } from 'node:child_process';
import { SUPERVISOR_PID_ENV } from '../../lib/supervisor-watch.js';
import { waitForExit } from '../../router/test-support/spawned-router.js';

export interface BrokenRouter {
  pid: number;
  /** `host:port` of its SSH front. */
  ssh: string;
  /** `http://host:port` of its HTTP front. */
  http: string;
  /** What it wrote (pino JSON lines, stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** The double's source, for `compilePrograms`. */
export const BROKEN_ROUTER = 'test/conformance/doubles/broken-router.ts';

export async function startBrokenRouter(
  program: string,
  world: string,
  breakage: string,
): Promise<BrokenRouter> {
  const child = spawn(process.execPath, [program, '--world', world, '--break', breakage], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // It ends itself when this process is gone (`lib/supervisor-watch.ts`), killed test runs too.
    env: { ...process.env, [SUPERVISOR_PID_ENV]: String(process.pid) },
  });
  const chunks: string[] = [];
  child.stderr?.on('data', (c: Buffer) => chunks.push(c.toString()));
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGTERM');
    if (!(await waitForExit(child, 10_000)) && child.pid !== undefined) {
      process.kill(child.pid, 'SIGKILL');
      await waitForExit(child, 5_000);
    }
  };
  const bound = await new Promise<{ ssh: string; http: string }>((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(
      () => void stop().then(() => reject(new Error(`no listening line:\n${chunks.join('')}`))),
      30_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`broken router ${breakage} exited ${code}:\n${chunks.join('')}`));
    });
    child.stdout?.on('data', (c: Buffer) => {
      chunks.push(c.toString());
      pending += c.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const entry = parse(line);
        if (entry?.msg !== 'listening') continue;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ ssh: String(entry.ssh), http: String(entry.http) });
      }
    });
  });
  return { pid: child.pid as number, ...bound, output: () => chunks.join(''), stop };
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

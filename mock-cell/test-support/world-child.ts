import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type {
  ControlAnswer,
  ControlRequest,
  ControlTarget,
  FromService,
  JournalDraft,
} from '../../lib/contracts/world.js';

/**
 * A mock-cell process started as a world's supervisor starts it: `node <main.js> --config <file>`
 * with a Node IPC channel. It collects the journal messages the process sends and sends control
 * requests, resolving with their answers. `stop()` ends it (SIGTERM, then SIGKILL) by its pid.
 */
export interface WorldChild {
  pid: number;
  /** URL of each served cell, from the `listening` line. */
  urls: Record<string, string>;
  /** Journal entries received so far, in order. */
  journal: JournalDraft[];
  control(
    op: string,
    args: Record<string, unknown>,
    cell?: string,
    target?: ControlTarget,
  ): Promise<ControlAnswer>;
  /** Resolves with the first entry (received from `from` on) that `match` accepts. */
  waitForEntry(match: (e: JournalDraft) => boolean, from?: number, timeoutMs?: number): Promise<JournalDraft>;
  stop(): Promise<void>;
}

interface ListeningLine {
  msg?: string;
  addresses?: { cell: string; url: string }[];
}

function listening(child: ChildProcess, timeoutMs: number): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('mock cell did not listen in time')), timeoutMs);
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mock cell exited with ${code}: ${stderr}`));
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      let parsed: ListeningLine;
      try {
        parsed = JSON.parse(line) as ListeningLine;
      } catch {
        return;
      }
      if (parsed.msg !== 'listening' || !parsed.addresses) return;
      clearTimeout(timer);
      resolve(Object.fromEntries(parsed.addresses.map((a) => [a.cell, a.url])));
    });
  });
}

export async function startWorldChild(
  mainJs: string,
  configFile: string,
  timeoutMs = 20_000,
): Promise<WorldChild> {
  const child = fork(mainJs, ['--config', configFile], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const journal: JournalDraft[] = [];
  const waiting = new Map<number, (a: ControlAnswer) => void>();
  child.on('message', (m: FromService) => {
    if (m.type === 'journal') journal.push(m.entry);
    else if (m.type === 'control-answer') waiting.get(m.id)?.(m);
  });
  let nextId = 1;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const urls = await listening(child, timeoutMs);
    return {
      pid: child.pid as number,
      urls,
      journal,
      stop,
      control: (op, args, cell, target = 'rails') =>
        new Promise((resolve, reject) => {
          const id = nextId++;
          const timer = setTimeout(() => reject(new Error(`no answer to control ${op}`)), 10_000);
          waiting.set(id, (a) => {
            clearTimeout(timer);
            waiting.delete(id);
            resolve(a);
          });
          const req: ControlRequest = { type: 'control', id, target, op, args, ...(cell ? { cell } : {}) };
          child.send(req);
        }),
      waitForEntry: async (match, from = 0, waitMs = 5000) => {
        const deadline = Date.now() + waitMs;
        for (;;) {
          const found = journal.slice(from).find(match);
          if (found) return found;
          if (Date.now() > deadline) throw new Error('no such journal entry arrived');
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

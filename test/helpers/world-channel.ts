/**
 * @file "A service with a world channel", for tests: starts `node <program> --config <file>` with a
 * Node IPC channel as the stack's supervisor does, collects the journal entries it sends, sends it
 * control requests and waits for their answers, and stops it (SIGTERM, then SIGKILL) by its pid.
 * Generic: any service built on `lib/service.ts` works.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type {
  ControlAnswer,
  ControlRequest,
  ControlTarget,
  FromService,
  JournalDraft,
} from '../../lib/contracts/world.js';
import { waitUntil } from './poll.js';

export interface WorldChild {
  readonly child: ChildProcess;
  /** Every journal entry received so far, in order. */
  readonly journal: JournalDraft[];
  /** Every log line of stdout parsed as JSON. */
  readonly logs: Record<string, unknown>[];
  stderr(): string;
  /** The fields of the `listening` line. */
  readonly listening: Promise<Record<string, unknown>>;
  /** Sends a control request; resolves with its answer (rejects after `ms` without one). */
  control(
    target: ControlTarget,
    op: string,
    args?: Record<string, unknown>,
    cell?: string,
  ): Promise<ControlAnswer>;
  /** Like `control`, but resolves with the result and rejects with the error of a refused op. */
  ok(target: ControlTarget, op: string, args?: Record<string, unknown>, cell?: string): Promise<unknown>;
  /** Waits until `count` entries matching `pred` have arrived; resolves with them. */
  entries(pred: (e: JournalDraft) => boolean, count?: number, ms?: number): Promise<JournalDraft[]>;
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra arguments after `--config <file>`. */
  args?: readonly string[];
  /** How long to wait for the `listening` line (default 20 s). */
  listenMs?: number;
}

let nextId = 1;

export function startWithWorldChannel(
  program: string,
  configFile: string,
  opts: StartOptions = {},
): WorldChild {
  const child = spawn(process.execPath, [program, '--config', configFile, ...(opts.args ?? [])], {
    env: { PATH: process.env.PATH, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const journal: JournalDraft[] = [];
  const logs: Record<string, unknown>[] = [];
  const waiting = new Map<number, (a: ControlAnswer) => void>();
  let stderr = '';
  let partial = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout?.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  child.on('message', (msg: FromService) => {
    if (msg.type === 'journal') journal.push(msg.entry);
    else if (msg.type === 'control-answer') waiting.get(msg.id)?.(msg);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = waitUntil(
    () =>
      logs.find((l) => l.msg === 'listening') ??
      (child.exitCode !== null ? { exited: child.exitCode } : undefined),
    opts.listenMs ?? 20_000,
    'listening line',
  ).then((line) => {
    if ('exited' in line) throw new Error(`${program} exited ${line.exited}: ${stderr}`);
    return line;
  });

  const control: WorldChild['control'] = (target, op, args = {}, cell) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const req: ControlRequest = { type: 'control', id, target, op, args, ...(cell ? { cell } : {}) };
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`no answer to control ${target} ${op} within 5000 ms`));
      }, 5_000);
      waiting.set(id, (a) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(a);
      });
      child.send(req);
    });

  return {
    child,
    journal,
    logs,
    stderr: () => stderr,
    listening,
    control,
    async ok(target, op, args, cell) {
      const a = await control(target, op, args, cell);
      if (!a.ok) throw new Error(`control ${target} ${op} refused: ${a.error}`);
      return a.result;
    },
    entries: (pred, count = 1, ms = 10_000) =>
      waitUntil(
        () => {
          const found = journal.filter(pred);
          return found.length >= count ? found : undefined;
        },
        ms,
        `${count} journal entries`,
      ),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

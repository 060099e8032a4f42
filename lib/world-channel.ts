/**
 * @file The service side of the world channel (`lib/contracts/world.ts`): journal what this process
 * received and answer the supervisor's control requests. Without a Node IPC channel (a service
 * started by hand or in a container) `journal` does nothing and no control request ever arrives.
 */
import type {
  ControlAnswer,
  ControlRequest,
  ControlTarget,
  FromService,
  JournalDraft,
} from './contracts/world.js';

/** Handles one control op; returns the op's JSON result, throws `ControlArgumentError` for bad input. */
export type ControlHandler = (args: Record<string, unknown>, cell: string | undefined) => unknown;

/** A control request whose arguments are wrong: the caller gets the message (HTTP 400). */
export class ControlArgumentError extends Error {}

const handlers = new Map<string, ControlHandler>();
let listening = false;

const keyOf = (target: ControlTarget, op: string) => `${target} ${op}`;

function send(message: FromService): void {
  if (!process.send || !process.connected) return;
  // A supervisor that is gone or busy must never stop a request: errors are dropped.
  process.send(message, undefined, {}, () => undefined);
}

/** Whether this process has a supervisor on the other end of a world channel. */
export function worldChannelOpen(): boolean {
  return process.send !== undefined && process.connected;
}

/** Appends `entry` to the world's journal (the supervisor gives it its `seq`). */
export function journal(entry: JournalDraft): void {
  send({ type: 'journal', entry });
}

async function answer(req: ControlRequest): Promise<void> {
  const handler = handlers.get(keyOf(req.target, req.op));
  const reply = (a: Omit<ControlAnswer, 'type' | 'id'>) => send({ type: 'control-answer', id: req.id, ...a });
  if (!handler) {
    reply({ ok: false, error: `unknown control op ${req.target} ${req.op}` });
    return;
  }
  try {
    reply({ ok: true, result: (await handler(req.args ?? {}, req.cell)) ?? null });
  } catch (err) {
    reply({ ok: false, error: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * Registers `handler` for `target op` (one handler per pair; a second registration replaces the
 * first). The channel is unref'd: it never keeps the process alive on its own.
 */
export function onControl(target: ControlTarget, op: string, handler: ControlHandler): void {
  handlers.set(keyOf(target, op), handler);
  if (listening || !process.send) return;
  listening = true;
  process.on('message', (msg: unknown) => {
    if (typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === 'control')
      void answer(msg as ControlRequest);
  });
  process.channel?.unref();
}

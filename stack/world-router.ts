/**
 * @file The supervisor's end of the world channel (`lib/contracts/world.ts`): every child's
 * `journal` messages go to the journal store; a control request goes to the child(ren) serving its
 * (target, cell) and resolves with their answers. A restarted child is attached again under the same
 * name and so gets the same routing.
 */
import type { ChildProcess } from 'node:child_process';
import type { ControlAnswer, ControlTarget, JournalDraft, JournalMessage } from '../lib/contracts/world.js';
import type { ServiceSpec } from './supervisor.js';

/** How long a child may take to answer one control request. */
export const CONTROL_TIMEOUT_MS = 5_000;

/** One child's answer to one request, with where it came from. */
export interface RoutedAnswer {
  service: string;
  cell?: string;
  ok: boolean;
  result?: unknown;
  error?: string;
  /** No answer came: the timeout passed, the child exited or has no channel. */
  unanswered?: boolean;
}

interface Attached {
  spec: ServiceSpec;
  child: ChildProcess;
}

interface Pending {
  service: string;
  resolve: (a: ControlAnswer) => void;
  unanswered: (error: string) => void;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

export class WorldRouter {
  private readonly children = new Map<string, Attached>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(
    private readonly onJournal: (draft: JournalDraft, service: string) => void,
    private readonly timeoutMs = CONTROL_TIMEOUT_MS,
  ) {}

  /** Called by the supervisor for every child it spawns (restarts too). */
  attach(spec: ServiceSpec, child: ChildProcess): void {
    this.children.set(spec.name, { spec, child });
    child.on('message', (msg: unknown) => this.receive(spec.name, msg));
    child.once('exit', () => {
      for (const p of [...this.pending.values()])
        if (p.service === spec.name) p.unanswered(`${spec.name} exited`);
    });
  }

  private receive(service: string, msg: unknown): void {
    if (!isObject(msg)) return;
    if (msg.type === 'journal' && isObject(msg.entry)) {
      this.onJournal((msg as unknown as JournalMessage).entry, service);
      return;
    }
    if (msg.type === 'control-answer' && typeof msg.id === 'number') {
      const p = this.pending.get(msg.id);
      if (p && p.service === service) p.resolve(msg as unknown as ControlAnswer);
    }
  }

  /** The cells that have a process answering `target` (sorted). */
  cellsOf(target: ControlTarget): string[] {
    const cells = new Set<string>();
    for (const { spec } of this.children.values())
      for (const c of spec.controls ?? []) if (c.target === target && c.cell) cells.add(c.cell);
    return [...cells].sort();
  }

  /** Whether any process answers `target` (for `cell`, when given). */
  serves(target: ControlTarget, cell?: string): boolean {
    if (target === 'world') return this.children.size > 0;
    return this.routes(target, cell).length > 0;
  }

  /**
   * (child, cell) pairs that get a request for `target` (and `cell`): for `world` every child once;
   * for a cell target without a cell, every cell of it.
   */
  private routes(target: ControlTarget, cell?: string): Array<{ a: Attached; cell?: string }> {
    const out: Array<{ a: Attached; cell?: string }> = [];
    for (const a of this.children.values()) {
      if (target === 'world') {
        out.push({ a });
        continue;
      }
      for (const c of a.spec.controls ?? []) {
        if (c.target !== target || (cell !== undefined && c.cell !== cell)) continue;
        out.push(c.cell === undefined ? { a } : { a, cell: c.cell });
      }
    }
    return out;
  }

  /** Sends `op` to every route of (target, cell) and resolves with each answer. */
  async control(
    target: ControlTarget,
    cell: string | undefined,
    op: string,
    args: Record<string, unknown>,
  ): Promise<RoutedAnswer[]> {
    const routes = this.routes(target, cell);
    return Promise.all(routes.map((r) => this.ask(r.a, target, r.cell, op, args)));
  }

  private ask(
    a: Attached,
    target: ControlTarget,
    cell: string | undefined,
    op: string,
    args: Record<string, unknown>,
  ): Promise<RoutedAnswer> {
    const id = this.nextId++;
    const service = a.spec.name;
    const base = cell === undefined ? { service } : { service, cell };
    return new Promise<RoutedAnswer>((resolve) => {
      const finish = (answer: Pick<ControlAnswer, 'ok' | 'result' | 'error'>) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve({ ...base, ok: answer.ok === true, result: answer.result, error: answer.error });
      };
      const unanswered = (error: string) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve({ ...base, ok: false, error, unanswered: true });
      };
      const timer = setTimeout(
        () => unanswered(`${service} did not answer within ${this.timeoutMs} ms`),
        this.timeoutMs,
      );
      this.pending.set(id, { service, resolve: finish, unanswered });
      const request = { type: 'control' as const, id, target, ...(cell ? { cell } : {}), op, args };
      if (!a.child.connected) {
        unanswered(`${service} has no world channel`);
        return;
      }
      a.child.send(request, (err) => {
        if (err) unanswered(`${service}: ${err.message}`);
      });
    });
  }
}

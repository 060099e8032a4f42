/**
 * @file What the account commands share: the user's cell, found like `/allowed`'s (the user's
 * namespace `/<username>` classified by the router's learner or the Topology Service, as
 * gitlab-shell's `ClientForUserArgs`), the POST to it, and reading the user's answer from stdin.
 */
import type { Readable } from 'node:stream';
import type { AccountActorJson } from '../../lib/contracts/account-api.js';
import type { Unchecked } from '../../lib/contracts/unchecked.js';
import { actorFields } from '../cells/actor.js';
import type { CallContext } from '../cells/internal-api.js';
import type { CellConfig } from '../config.js';
import { RouterError } from '../errors.js';
import type { CommandContext } from './context.js';

export function callContext(ctx: CommandContext): CallContext {
  return { requestId: ctx.requestId, remoteIp: ctx.remoteIp, signal: ctx.signal, log: ctx.log };
}

/** The cell that holds the key owner's namespace (the legacy cell when the key has no user). */
export async function userCell(ctx: CommandContext): Promise<CellConfig> {
  const call = callContext(ctx);
  const username =
    'username' in ctx.actor
      ? ctx.actor.username
      : (await ctx.deps.api.discover(ctx.actor.keyId, call)).username;
  const path = username ? `/${username}` : '/';
  const { cell, via } = await ctx.deps.classifier.classify(path, 'GET', call);
  ctx.log.debug({ cell: cell.name, route: via, user: username }, 'account command routed');
  return cell;
}

/** POSTs `body` with the key id to the user's cell. */
export async function postAccount<T>(ctx: CommandContext, path: string, body: object): Promise<Unchecked<T>> {
  const cell = await userCell(ctx);
  const actor: AccountActorJson = actorFields(ctx.actor);
  return ctx.deps.api.post<T>(cell, path, { ...actor, ...body }, callContext(ctx));
}

/** `success: false` → the answer's message as the user's `ERROR:` (gitlab-shell: `errors.New(message)`). */
export function refusedUnlessSuccess(answer: { success?: unknown; message?: unknown }): void {
  if (answer.success === true) return;
  throw RouterError.accountRefused(
    typeof answer.message === 'string' ? answer.message : 'Internal API error',
  );
}

/**
 * The user's first word on stdin, as Go's `fmt.Fscanln` reads it: up to `limit` bytes or the end of
 * the line; empty when stdin ended first.
 */
export function readAnswer(stdin: Readable, limit: number, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      stdin.pause();
      if (err) reject(err);
      else resolve(text.split('\n')[0]?.trim().split(/\s+/)[0] ?? '');
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n') || text.length >= limit) {
        text = text.slice(0, limit);
        finish();
      }
    };
    const onEnd = () => finish();
    const onAbort = () => finish(RouterError.cancelled('cancelled'));
    if (signal.aborted) return onAbort();
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.resume();
  });
}

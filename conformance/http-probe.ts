/**
 * @file What the HTTP checks send through the router's HTTP front (`--http`): one request (redirects
 * never followed, the answer read whole), the kit user's Basic credentials, git over HTTP as that
 * user, and journal views of which cell's Rails saw a request.
 */
import type { JournalEntry } from '../lib/contracts/world.js';
import type { CheckContext } from './context.js';
import type { ExecResult } from './exec.js';
import { KIT_USER } from './world-plan.js';

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** `<method> <http><path>` through the router under test; never follows a redirect. */
export async function httpProbe(
  ctx: CheckContext,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  const res = await fetch(`${ctx.router.http}${path}`, {
    method: init.method ?? 'GET',
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body }),
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The kit user's password on the kit's world (the mock cell's `<user>-password`). */
export const KIT_PASSWORD = `${KIT_USER}-password`;

export const kitBasic = (): string =>
  `Basic ${Buffer.from(`${KIT_USER}:${KIT_PASSWORD}`).toString('base64')}`;

/** `http://kit:kit-password@<front>/<path>`: a git remote through the HTTP front. */
export function gitHttpUrl(ctx: CheckContext, path: string): string {
  const url = new URL(`${ctx.router.http}/${path}`);
  url.username = KIT_USER;
  url.password = KIT_PASSWORD;
  return url.toString();
}

/** `git <args>` with no credential helper (the URL carries them). */
export function gitHttp(ctx: CheckContext, args: string[]): Promise<ExecResult> {
  return ctx.git(['-c', 'credential.helper=', ...args]);
}

/** The Rails entries of `method path` (path without query), in journal order. */
export const railsSaw = (entries: JournalEntry[], method: string, path: string) =>
  entries.filter((e) => e.service === 'rails' && e.method === method && e.endpoint === path);

/** One `cell status` per entry, or `none`. */
export const cellsOf = (entries: JournalEntry[]) =>
  entries.map((e) => `${e.cell ?? '-'} ${e.status}`).join(', ') || 'none';

/** The value of every route claim the Topology Service was asked (gRPC `route` claim or REST `ROUTE`). */
export function routeClaims(entries: JournalEntry[]): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (e.service !== 'topology-service') continue;
    const f = e.fields ?? {};
    const claim = f.claim as { type?: unknown; value?: unknown } | undefined;
    if (claim && String(claim.type).toLowerCase() === 'route') out.push(String(claim.value));
    else if (typeof f.type === 'string' && f.type.toLowerCase() === 'route') out.push(String(f.value));
  }
  return out;
}

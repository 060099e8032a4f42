/**
 * @file Checks of the HTTP front's rules (reference-cell.md §5.2 H1, H2, H3, H5, H7): rule order,
 * the session cookie, routable runner tokens, format suffixes and reserved paths, judged from which
 * cell's Rails saw each request and which route claims the Topology Service was asked.
 */
import { encodeRoutableToken } from '../../lib/routable-token.js';
import { type ConformanceCheck, fail, firstFailure, pass, type Verdict } from '../check.js';
import type { CheckContext } from '../context.js';
import { cellsOf, httpProbe, railsSaw, routeClaims } from '../http-probe.js';
import { ROUTED } from '../world-plan.js';

/** The id (Topology Service `CELL_ID`, session prefix `cell-<id>`) of a cell of the world. */
export function cellId(ctx: CheckContext, name: string): number {
  const cell = ctx.stack.cells.find((c) => c.name === name);
  if (!cell) throw new Error(`the world has no cell ${name}`);
  return cell.id;
}

/** A non-legacy cell other than the routed project's (the kit world's `conf_south`). */
export function otherCell(ctx: CheckContext): string {
  const other = ctx.stack.cells.find((c) => !c.legacy && c.name !== ROUTED.cell);
  if (!other) throw new Error('the world has no third cell');
  return other.name;
}

export const sessionCookie = (id: number) => `_gitlab_session=cell-${id}-${'0123456789abcdef'.repeat(2)}`;
export const runnerToken = (id: number) => encodeRoutableToken('glrt-', { c: id, o: 1 });

/** Sends one request and returns which cells' Rails saw it and the route claims asked meanwhile. */
export async function probe(
  ctx: CheckContext,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const since = await ctx.cursor();
  const sent = Date.now();
  const answer = await httpProbe(ctx, path, init);
  // A request of the check before that arrived earlier may reach the journal after the cursor (its
  // entry is appended once it is answered; H11 leaves reading at the first byte): not this probe's.
  const entries = (await ctx.journalSince(since)).filter((e) => Date.parse(e.time) >= sent);
  return { answer, seen: railsSaw(entries, init.method ?? 'GET', path.split('?')[0] as string), entries };
}

/** A request Rails saw once, at `cell`. */
function landed(label: string, seen: { cell: string | null }[], cell: string): Verdict {
  if (seen.length === 1 && seen[0]?.cell === cell) return pass();
  return fail(`${label}: Rails saw it at ${cellsOf(seen as never)} (want ${cell})`);
}

export const H1: ConformanceCheck = {
  id: 'H1',
  title:
    "rules top to bottom, first match wins: a runner token of one cell beats another cell's session cookie",
  source: 'gitlab doc/development/cells/http_router.md (session_token ruleset)',
  needs: ['http'],
  async run(ctx) {
    const south = otherCell(ctx);
    const { seen } = await probe(ctx, '/', {
      headers: {
        'runner-token': runnerToken(cellId(ctx, ROUTED.cell)),
        cookie: sessionCookie(cellId(ctx, south)),
      },
    });
    return landed('runner-token rule before the cookie rule', seen, ROUTED.cell);
  },
};

export const H2: ConformanceCheck = {
  id: 'H2',
  title: '`_gitlab_session=cell-<id>-…` of another cell: proxied there, no path classify',
  source: 'http-router session_token ruleset; gitlab lib/gitlab/sessions/cache_store.rb',
  needs: ['http'],
  async run(ctx) {
    const south = otherCell(ctx);
    const { seen, entries } = await probe(ctx, '/', {
      headers: { cookie: sessionCookie(cellId(ctx, south)) },
    });
    const claims = routeClaims(entries);
    if (claims.length > 0) return fail(`route claims ${JSON.stringify(claims)} asked for /`);
    return landed(`cookie of ${south}`, seen, south);
  },
};

const MALFORMED = `glrt-${'A'.repeat(30)}.01.zz1234567`;

export const H3: ConformanceCheck = {
  id: 'H3',
  title:
    'runner-token header: CELL_ID from the token; undecodable → legacy cell; malformed in a matched rule → 400',
  source: 'gitlab doc/development/cells/http_router.md; http-router!1384',
  needs: ['http'],
  async run(ctx) {
    const path = '/api/v4/runners/verify';
    const south = otherCell(ctx);
    const routed = await probe(ctx, path, {
      method: 'POST',
      headers: { 'runner-token': runnerToken(cellId(ctx, south)) },
    });
    const plain = await probe(ctx, path, {
      method: 'POST',
      headers: { 'runner-token': 'glrt-conformanceplaintoken1' },
    });
    const bad = await probe(ctx, path, { method: 'POST', headers: { 'runner-token': MALFORMED } });
    return firstFailure([
      landed('routable runner token', routed.seen, south),
      landed('undecodable runner token', plain.seen, ctx.legacyCell),
      bad.answer.status === 400 && bad.seen.length === 0
        ? pass()
        : fail(
            `malformed runner token: ${bad.answer.status}, Rails saw it at ${cellsOf(bad.seen)} (want 400 from the router)`,
          ),
    ]);
  },
};

/** H5's cases: path → the route claim it must give. */
const SUFFIXES: Array<[string, string]> = [
  ['/john.doe', 'john.doe'],
  ['/john.doe.json', 'john.doe'],
  [`/${ROUTED.project}/-/tree/main.json`, ROUTED.group],
];

export const H5: ConformanceCheck = {
  id: 'H5',
  title:
    'one format suffix stripped at the last dot: /john.doe, /john.doe.json → route john.doe; /g/p/-/tree/main.json → g',
  source: 'gitlab doc/development/cells/http_router.md (routes snapshot consumers)',
  needs: ['http'],
  async run(ctx) {
    const verdicts: Verdict[] = [];
    for (const [path, claim] of SUFFIXES) {
      const { entries } = await probe(ctx, path);
      const claims = routeClaims(entries);
      verdicts.push(
        claims.length > 0 && claims.every((c) => c === claim)
          ? pass()
          : fail(`${path}: route claims ${JSON.stringify(claims)} (want ${JSON.stringify(claim)})`),
      );
    }
    return firstFailure(verdicts);
  },
};

/** Reserved first segments (GitLab's top-level routes), each with a path the kit asks. */
const RESERVED: Array<[string, string]> = [
  ['api', '/api/v4/projects'],
  ['admin', '/admin/users'],
  ['-', '/-/profile'],
  ['users', '/users/sign_in'],
];

export const H7: ConformanceCheck = {
  id: 'H7',
  title: 'reserved words (/api, /admin, /-/, /users/sign_in) are never classified as a namespace',
  source: 'http-router generated route guards (gitlab config/routing/gitlab_routes.json)',
  needs: ['http'],
  async run(ctx) {
    // A trap: were the words classified, the Topology Service would send them to another cell.
    const address = new URL(ctx.stack.cells.find((c) => c.name === ROUTED.cell)?.shellEndpoint ?? '').host;
    for (const [word] of RESERVED)
      await ctx.control.topologyService.answer({ claim: { type: 'route', value: word }, proxy: address });
    try {
      const verdicts: Verdict[] = [];
      for (const [word, path] of RESERVED) {
        const { seen, entries } = await probe(ctx, path);
        const claims = routeClaims(entries);
        verdicts.push(
          claims.includes(word)
            ? fail(`${path}: classified as route=${word}; Rails saw it at ${cellsOf(seen)}`)
            : landed(path, seen, ctx.legacyCell),
        );
      }
      return firstFailure(verdicts);
    } finally {
      await ctx.control.topologyService.reset();
    }
  },
};

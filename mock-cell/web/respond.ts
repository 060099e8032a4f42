import type { FastifyReply, FastifyRequest } from 'fastify';
import { CELL_REDIRECT_HEADER } from '../../lib/contracts/internal-api.js';
import type { CellContext } from '../context.js';
import type { RouteMatch } from '../routing/table.js';
import { type Layout, layout } from './html.js';

/** How pages and API endpoints answer: HTML or JSON by format, redirects, the "not mine" signal. */

/** The "not mine" signal (contracts.md): 421, the owning cell in a header, JSON `{status, message}`. */
export function notMine(reply: FastifyReply, owner: string, message: string) {
  return reply.code(421).header(CELL_REDIRECT_HEADER, owner).send({ status: false, message });
}

/** A query value that keeps `/` readable, as the seed shows `?redirect=/my-company/my-project`. */
export function queryValue(value: string): string {
  return encodeURIComponent(value).replace(/%2F/g, '/');
}

export function signInRedirect(req: FastifyRequest, reply: FastifyReply) {
  return reply.redirect(`/users/sign_in?redirect=${queryValue(req.url)}`, 302);
}

export interface Renderings {
  html: () => Omit<Layout, 'cell'>;
  json?: () => unknown;
}

/** Renders a page in the format the path asked for (`.json` when supported); others → 406. */
export function render(reply: FastifyReply, ctx: CellContext, m: RouteMatch, status: number, r: Renderings) {
  if (m.format === undefined || m.format === 'html') {
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(layout({ ...r.html(), cell: ctx.cell }));
  }
  if (m.format === 'json' && r.json) return reply.code(status).send(r.json());
  return reply.code(406).send({ message: '406 Not Acceptable' });
}

/** Rails' 404 page (or JSON for `.json`). */
export function notFound(reply: FastifyReply, ctx: CellContext, m: RouteMatch) {
  return render(reply, ctx, m, 404, {
    html: () => ({ title: 'Not Found', page: 'errors:not_found', body: '<h1>404: Page not found</h1>' }),
    json: () => ({ message: '404 Not Found' }),
  });
}

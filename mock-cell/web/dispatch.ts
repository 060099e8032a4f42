import type { FastifyError, FastifyInstance } from 'fastify';
import type { CellContext } from '../context.js';
import { LFS_CONTENT_TYPE, LFS_HANDLERS } from '../git-http/lfs.js';
import { GIT_HTTP_HANDLERS } from '../git-http/preauth.js';
import { PREAUTH_HANDLERS } from '../routes/preauth.js';
import { matchRoute } from '../routing/table.js';
import { API_HANDLERS } from './api.js';
import type { PageHandler } from './page-handler.js';
import { PAGE_HANDLERS } from './pages.js';
import { SIGN_IN_HANDLERS } from './sign-in.js';

/**
 * One catch-all Fastify route that dispatches pages, REST API endpoints and the tunnel
 * pre-authorization by the route table (`routing/table.ts`), so what the cell serves is exactly
 * what `cells/learn` and the route snapshot describe. Fastify's own routes (the internal API) take
 * precedence; a path no page route matches answers `404 {"message":"404 Not Found"}`.
 */

export const HANDLERS: Readonly<Record<string, PageHandler>> = {
  ...PAGE_HANDLERS,
  ...SIGN_IN_HANDLERS,
  ...API_HANDLERS,
  ...PREAUTH_HANDLERS,
  ...GIT_HTTP_HANDLERS,
  ...LFS_HANDLERS,
};

function badBody(message: string): FastifyError {
  return Object.assign(new Error(message), { statusCode: 400, code: 'CELL_BAD_BODY', name: 'BadBody' });
}

/** Form fields as Rack parses them: repeated `k[]` keys become an array under `k`. */
function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (key.endsWith('[]')) {
      const name = key.slice(0, -2);
      const prev = out[name];
      out[name] = Array.isArray(prev) ? [...prev, value] : [value];
    } else {
      out[key] = value;
    }
  }
  return out;
}

export function registerDispatcher(scope: FastifyInstance, ctx: CellContext): void {
  // Tunnel pre-authorization carries no body of interest: any content type is accepted and ignored.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text as string));
    } catch (err) {
      done(badBody(`body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
  scope.addContentTypeParser(LFS_CONTENT_TYPE, { parseAs: 'string' }, (_req, text, done) => {
    try {
      done(null, text === '' ? undefined : JSON.parse(text as string));
    } catch (err) {
      done(badBody(`body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, text, done) =>
    done(null, parseForm(text as string)),
  );
  scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  scope.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/*',
    exposeHeadRoute: false,
    handler: async (req, reply) => {
      const m = matchRoute(req.method, req.url);
      const handler = m?.route.served === 'pages' ? HANDLERS[m.route.name] : undefined;
      if (!m || !handler) return reply.code(404).send({ message: '404 Not Found' });
      return handler(req, reply, m, ctx);
    },
  });
}

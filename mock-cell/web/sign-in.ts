import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { CellContext } from '../context.js';
import type { RouteMatch } from '../routing/table.js';
import { SESSION_COOKIE } from '../sessions.js';
import { esc } from './html.js';
import { cookie, visitor } from './identity.js';
import type { PageHandler } from './page-handler.js';
import { queryValue, render } from './respond.js';

/**
 * Sign-in and sign-out (Devise's `/users/sign_in`, `/users/sign_out`). A successful sign-in creates
 * a session for the cell of the user's default organization (`_gitlab_session=cell-<id>-<32 hex>`),
 * as Cells' username-routed sign-in would: the router then sends the user's requests to that cell.
 */

export const INVALID_LOGIN = 'Invalid login or password.';

/** A local path to go back to after signing in; anything else (other hosts, `//x`) becomes `/`. */
export function safeRedirect(target: unknown): string {
  return typeof target === 'string' && /^\/(?![/\\])/.test(target) ? target : '/';
}

function redirectParam(query: unknown): string {
  return safeRedirect((query as Record<string, unknown> | undefined)?.redirect);
}

/** Devise's form fields `user[login]`, `user[password]`, or JSON `{user: {login, password}}`. */
function credentials(body: unknown): { login?: string; password?: string } {
  if (body === null || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const nested = (b.user ?? {}) as Record<string, unknown>;
  const pick = (k: string) => {
    const v = b[`user[${k}]`] ?? nested[k];
    return typeof v === 'string' ? v : undefined;
  };
  const login = pick('login');
  const password = pick('password');
  return { ...(login === undefined ? {} : { login }), ...(password === undefined ? {} : { password }) };
}

function samePassword(given: string, expected: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(given), h(expected));
}

function form(
  reply: FastifyReply,
  ctx: CellContext,
  m: RouteMatch,
  status: number,
  target: string,
  alert?: string,
) {
  const action = target === '/' ? '/users/sign_in' : `/users/sign_in?redirect=${queryValue(target)}`;
  return render(reply, ctx, m, status, {
    html: () => ({
      title: 'Sign in',
      page: 'sessions:new',
      body: [
        '<h1>Sign in</h1>',
        alert === undefined ? '' : `<p class="flash-alert">${esc(alert)}</p>`,
        `<form method="post" action="${esc(action)}">`,
        '<label>Username <input name="user[login]" autocomplete="username"></label>',
        '<label>Password <input type="password" name="user[password]" autocomplete="current-password"></label>',
        '<button type="submit">Sign in</button>',
        '</form>',
      ].join('\n'),
    }),
  });
}

const signInForm: PageHandler = (req, reply, m, ctx) => {
  const target = redirectParam(req.query);
  if (visitor(req, ctx, { tokens: false }).kind === 'user') return reply.redirect(target, 302);
  return form(reply, ctx, m, 200, target);
};

const signIn: PageHandler = (req, reply, m, ctx) => {
  const target = redirectParam(req.query);
  const { login, password } = credentials(req.body);
  const user = login === undefined ? undefined : ctx.model.userByUsername(login);
  if (!user || password === undefined || !samePassword(password, user.password)) {
    req.log.info({ login }, 'sign-in refused');
    return form(reply, ctx, m, 401, target, INVALID_LOGIN);
  }
  const home = ctx.model.cellOfOrganization(ctx.model.defaultOrganizationOf(user));
  const session = ctx.sessions.create(user.id, home.id);
  req.log.info({ user: user.username, sessionCell: home.name }, 'signed in');
  return reply
    .header('set-cookie', `${SESSION_COOKIE}=${session.id}; Path=/; HttpOnly; SameSite=Lax`)
    .redirect(target, 302);
};

const signOut: PageHandler = (req, reply, _m, ctx) => {
  const sid = cookie(req, SESSION_COOKIE);
  if (sid !== undefined) ctx.sessions.delete(sid);
  return reply
    .header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`)
    .redirect('/users/sign_in', 302);
};

/**
 * Two-step sign-in (gitlab!219667): `GET /users/sign_in_path?login=<username>` → `{sign_in_path:
 * null}` when the user signs in on this cell (or is unknown), else the path to reload,
 * `/users/sign_in?login=<login>`, which the router classifies to the user's cell.
 */
const signInPath: PageHandler = (req, reply, _m, ctx) => {
  const login = (req.query as Record<string, unknown> | undefined)?.login;
  const user = typeof login === 'string' ? ctx.model.userByUsername(login) : undefined;
  const home = user && ctx.model.cellOfOrganization(ctx.model.defaultOrganizationOf(user));
  const path =
    home && home.name !== ctx.cell ? `/users/sign_in?login=${encodeURIComponent(login as string)}` : null;
  return reply.code(200).send({ sign_in_path: path });
};

export const SIGN_IN_HANDLERS = {
  sign_in_path: signInPath,
  sign_in_form: signInForm,
  sign_in: signIn,
  sign_out: signOut,
} satisfies Record<string, PageHandler>;

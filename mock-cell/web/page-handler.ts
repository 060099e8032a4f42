import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CellContext } from '../context.js';
import type { RouteMatch } from '../routing/table.js';
import type { TopologyUser } from '../topology-types.js';
import { type Visitor, visitor } from './identity.js';

/**
 * What every handler of the route table is (pages, sign-in, REST API, pre-authorization), and who
 * visits a page: pages authenticate by session only, as GitLab's web UI.
 */

export type PageHandler = (
  req: FastifyRequest,
  reply: FastifyReply,
  m: RouteMatch,
  ctx: CellContext,
) => Promise<unknown> | unknown;

export function sessionVisitor(req: FastifyRequest, ctx: CellContext): Visitor {
  return visitor(req, ctx, { tokens: false });
}

export const userOf = (v: Visitor): TopologyUser | undefined => (v.kind === 'user' ? v.user : undefined);

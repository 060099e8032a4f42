import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TopologyModel } from '../topology.js';
import { maintenanceGuard } from './enforce.js';
import { type Fault, faultKind } from './faults.js';
import { type EntryContext, journalEntry, markFault, markStart } from './journal.js';
import type { RailsWorld } from './rails-world.js';

/**
 * The world's hooks on one cell's app: programmed faults answer first (before authentication, as
 * a misbehaving front would), organization maintenance refuses git/LFS/API requests of the
 * organization's projects once the request is authenticated, and every request is journaled.
 */

async function applyFault(req: FastifyRequest, reply: FastifyReply, fault: Fault, onReset: () => void) {
  const kind = faultKind(fault);
  markFault(req, { kind, id: fault.id, endpoint: fault.endpoint });
  if (fault.latencyMs !== undefined && fault.latencyMs > 0) await sleep(fault.latencyMs);
  if (kind === 'latency') return undefined;
  if (kind === 'reset') {
    reply.hijack();
    req.raw.socket?.destroy();
    onReset();
    return reply;
  }
  for (const [name, value] of Object.entries(fault.headers ?? {})) reply.header(name, value);
  if (kind === 'redirect' && fault.redirect) {
    return reply.code(fault.redirect.status).header('location', fault.redirect.location).send();
  }
  reply.code(fault.status ?? 200);
  if (typeof fault.body === 'string') {
    if (!reply.hasHeader('content-type')) reply.type('text/plain; charset=utf-8');
    return reply.send(fault.body);
  }
  if (fault.body === undefined) return reply.send();
  if (!reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8');
  return reply.send(JSON.stringify(fault.body));
}

export function installWorld(
  app: FastifyInstance,
  model: TopologyModel,
  world: RailsWorld,
  at: EntryContext,
): void {
  const faults = world.faultsOf(at.cell);
  app.addHook('onRequest', async (req, reply) => {
    markStart(req);
    const fault = faults.take(req.method, req.url.split('?')[0] ?? req.url);
    if (!fault) return;
    return applyFault(req, reply, fault, () => world.record(() => journalEntry(at, req, undefined, 'reset')));
  });
  app.addHook('preHandler', maintenanceGuard(model, world.maintenance));
  app.addHook('onResponse', async (req, reply) => {
    world.record(() => journalEntry(at, req, reply));
  });
}

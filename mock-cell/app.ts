import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { ConfigError } from '../lib/config.js';
import type { JwtKey } from '../lib/jwt.js';
import type { Logger } from '../lib/logger.js';
import { AccessChecker } from './access.js';
import type { ClaimSync } from './claim-sync.js';
import type { CellContext } from './context.js';
import { Replicas } from './geo/replica.js';
import { registerGeoTestSwitch, registerGeoUpdates } from './geo/routes.js';
import { geoRoleFor } from './geo/site.js';
import { createGitInspector, type GitInspector } from './git.js';
import { HookLog } from './hook-log.js';
import { addShellAuth } from './plugins/shell-auth.js';
import { registerAccountRoutes } from './routes/account.js';
import { registerAllowed } from './routes/allowed.js';
import { registerCellsAdmin } from './routes/cells.js';
import { registerJobTokenIssuer } from './routes/ci-job-token.js';
import { defaultErrorHandler } from './routes/errors.js';
import { registerHooks } from './routes/hooks.js';
import { registerInternalRoutes } from './routes/internal.js';
import { registerLearn } from './routes/learn.js';
import { registerOrgMover } from './routes/org-mover.js';
import { registerShellhorse } from './routes/shellhorse.js';
import { SessionStore } from './sessions.js';
import { TokenStore } from './tokens.js';
import type { TopologyModel } from './topology.js';
import { registerDispatcher } from './web/dispatch.js';
import { installWorld } from './world/hooks.js';
import { CiJobTokens } from './world/job-tokens.js';
import { RailsWorld } from './world/rails-world.js';

/** Response header naming the cell that answered (every response). */
export const CELL_HEADER = 'X-Gitlab-Cell';

export interface CellAppDeps {
  logger: Logger;
  shellKey: JwtKey;
  workhorseKey: JwtKey;
  /** Handed to the bridge and GitLab Shell as the Gitaly token. */
  gitalyToken: string;
  /** Defaults to the real `git` binary. */
  git?: GitInspector;
  /** Defaults to a fresh bounded log per app. */
  hookLog?: HookLog;
  /** Browser sessions; pass one store to every cell of a process (default: a store of its own). */
  sessions?: SessionStore;
  /** Access and runner tokens; pass one store to every cell of a process (default: a store of its own). */
  tokens?: TokenStore;
  /** Claim registration with the Topology Service (re-claims after an organization move). */
  claims?: ClaimSync | undefined;
  /** The Geo secondary site this process serves (`geoSite` of the config); else the cell's primary role. */
  geoSite?: string | undefined;
  /** Faults, maintenance and the journal sink; pass one to every cell of a process (default: its own, no journal). */
  world?: RailsWorld;
  /** `glcbt-` CI job tokens; pass one to every cell of a process (default: its own). */
  jobTokens?: CiJobTokens;
}

/** Builds (does not start) the Rails-shaped app of one cell of the topology. */
export function buildCellApp(model: TopologyModel, cellName: string, deps: CellAppDeps): FastifyInstance {
  const cell = model.cell(cellName);
  if (!cell) throw new ConfigError(`no cell "${cellName}" in the topology`);
  const app = Fastify({
    loggerInstance: deps.logger.child({ cell: cellName }) as FastifyBaseLogger,
    // Internal API fields such as key_id arrive as strings or numbers, as Grape accepts them.
    ajv: { customOptions: { allowUnionTypes: true } },
  });
  const ctx: CellContext = {
    model,
    cell: cellName,
    cellId: cell.id,
    access: new AccessChecker(model, deps.git ?? createGitInspector()),
    hookLog: deps.hookLog ?? new HookLog(),
    sessions: deps.sessions ?? new SessionStore(),
    tokens: deps.tokens ?? new TokenStore(),
    shellKey: deps.shellKey,
    workhorseKey: deps.workhorseKey,
    gitalyToken: deps.gitalyToken,
    claims: deps.claims,
    world: deps.world ?? new RailsWorld(),
    jobTokens: deps.jobTokens ?? new CiJobTokens(model),
  };
  const role = geoRoleFor(model, cellName, deps.geoSite);
  if (role) {
    const replicas = role.self.role === 'secondary' ? new Replicas(model, role, deps.logger) : undefined;
    ctx.geo = { role, replicas };
    if (replicas) app.addHook('onClose', async () => replicas.close());
  }

  installWorld(app, model, ctx.world, { cell: cellName, site: deps.geoSite });
  // Seed 000's signal: GitLab names no cell in its answers.
  if (model.seed000Routing())
    app.addHook('onRequest', async (_req, reply) => {
      reply.header(CELL_HEADER, cellName);
    });
  app.setErrorHandler(defaultErrorHandler);
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ message: '404 Not Found' }));

  app.register(
    async (internal) => {
      addShellAuth(internal, ctx.shellKey);
      registerInternalRoutes(internal, ctx);
      registerAccountRoutes(internal, ctx);
      registerAllowed(internal, ctx);
      registerHooks(internal, ctx);
      // GitLab has no learn endpoint: only seed 000's routing signals add it.
      if (model.seed000Routing()) registerLearn(internal, ctx);
      registerOrgMover(internal, ctx);
      registerJobTokenIssuer(internal, ctx);
      registerCellsAdmin(internal, ctx);
      registerGeoTestSwitch(internal, ctx);
    },
    { prefix: '/api/v4/internal' },
  );
  registerShellhorse(app, ctx);
  app.register(async (geo) => registerGeoUpdates(geo, ctx));
  app.register(async (pages) => registerDispatcher(pages, ctx));
  return app;
}

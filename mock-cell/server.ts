import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { jwtKey } from '../lib/jwt.js';
import { httpUrl } from '../lib/listen-address.js';
import { readSecretFile } from '../lib/secrets.js';
import { buildCellApp, type CellAppDeps } from './app.js';
import { ClaimSync } from './claim-sync.js';
import { checkListenCells, type ListenEntry, loadMockCellConfig, type MockCellConfig } from './config.js';
import { geoRoleFor, loadSiteModel } from './geo/site.js';
import { SessionStore } from './sessions.js';
import { TokenStore } from './tokens.js';
import { loadTopologyFile, type TopologyModel } from './topology.js';
import { CiJobTokens } from './world/job-tokens.js';
import { RailsWorld } from './world/rails-world.js';

/** Start-up of a mock-cell process: config → topology → secrets, then one listening app per cell. */

export interface Prepared {
  config: Readonly<MockCellConfig>;
  model: TopologyModel;
  secrets: Pick<CellAppDeps, 'shellKey' | 'workhorseKey' | 'gitalyToken'>;
}

/** Loads and checks everything a start needs; throws ConfigError / CELL_TOPOLOGY_INVALID on bad input. */
export function prepare(file: Record<string, unknown>, env: NodeJS.ProcessEnv): Prepared {
  const config = loadMockCellConfig(file, env);
  const model = config.geoSite
    ? loadSiteModel(config.topologyFile, config.geoSite)
    : loadTopologyFile(config.topologyFile);
  checkListenCells(config, model);
  // Geo node keys are read now, so a missing secret is a bad setting at start.
  for (const entry of config.listen) geoRoleFor(model, entry.cell, config.geoSite);
  return {
    config,
    model,
    secrets: {
      shellKey: jwtKey(readSecretFile(config.shellSecretFile, 'shell secret')),
      workhorseKey: jwtKey(readSecretFile(config.workhorseSecretFile, 'workhorse secret')),
      gitalyToken: readSecretFile(config.gitalyTokenFile, 'Gitaly token'),
    },
  };
}

export interface ServedCell {
  cell: string;
  url: string;
}

export interface RunningCells {
  cells: ServedCell[];
  /** Faults, maintenance and journal of these cells (the control ops act on it). */
  world: RailsWorld;
  claims: ClaimSync | undefined;
  jobTokens: CiJobTokens;
  close(): Promise<void>;
}

/** Builds and starts one app per listen entry (each its own port and cell identity). */
export async function startCells(
  model: TopologyModel,
  listen: readonly ListenEntry[],
  deps: CellAppDeps,
  topologyService?: string,
): Promise<RunningCells> {
  const claims = topologyService ? new ClaimSync(topologyService, model, deps.logger) : undefined;
  const apps: FastifyInstance[] = [];
  const cells: ServedCell[] = [];
  // The cells of one process share users' sessions and tokens, as they share the model.
  const shared: CellAppDeps = {
    ...deps,
    sessions: deps.sessions ?? new SessionStore(),
    tokens: deps.tokens ?? new TokenStore(),
    claims,
    world: deps.world ?? new RailsWorld(),
    jobTokens: deps.jobTokens ?? new CiJobTokens(model),
  };
  try {
    for (const entry of listen) {
      const app = buildCellApp(model, entry.cell, shared);
      apps.push(app);
      await app.listen({ host: entry.host, port: entry.port });
      cells.push({ cell: entry.cell, url: httpUrl(app.server.address() as AddressInfo) });
    }
    // Registered once every cell listens; a service that stays unreachable is logged, not fatal.
    if (claims) await Promise.all(listen.map((e) => claims.registerCell(e.cell)));
  } catch (err) {
    await Promise.allSettled(apps.map((a) => a.close()));
    claims?.close();
    throw err;
  }
  return {
    cells,
    world: shared.world as RailsWorld,
    claims,
    jobTokens: shared.jobTokens as CiJobTokens,
    close: async () => {
      await Promise.all(apps.map((a) => a.close()));
      claims?.close();
    },
  };
}

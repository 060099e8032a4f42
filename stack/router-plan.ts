import { DEFAULT_TUNNEL_PROFILE, type TunnelProfileName } from '../lib/contracts/tunnel-profile.js';
import { SHELL_TTL_SECONDS } from '../lib/jwt-sign.js';
import type { StackPaths } from './layout.js';

/**
 * The config of every router a stack starts — the `learn` router, the `topology` router and a Geo
 * secondary's `site` router — from one function, so they differ only in what their mode needs.
 */

/** A cell as a router's `cells` setting names it. */
export interface RouterCell {
  id: number;
  name: string;
  legacy: boolean;
  region: string;
  url: string;
}

export interface RouterPlan {
  routing: 'learn' | 'topology' | 'site';
  sshListen: string;
  httpListen: string;
  metricsListen?: string;
  region: string;
  cells: RouterCell[];
  /** The Topology Service (`topology` mode): gRPC `host:port`, REST URL, and the cells' shell port. */
  topologyService?: { grpc: string; http: string; cellEndpointPort: number };
  logLevel: string;
  /** The topology file's `routers.tunnelProfile` (or `--tunnel-profile`); the default is left unwritten. */
  tunnelProfile?: TunnelProfileName;
  /** The topology file's `routers.shellJwtTtlSeconds`; gitlab-shell's 60 s is left unwritten. */
  shellJwtTtlSeconds?: number;
}

export function routerConfig(paths: StackPaths, plan: RouterPlan): Record<string, unknown> {
  const ts = plan.topologyService;
  return {
    // `learn` is the router's default mode: its config does not name it (as before).
    ...(plan.routing === 'learn' ? {} : { routing: plan.routing }),
    sshListen: plan.sshListen,
    httpListen: plan.httpListen,
    ...(plan.metricsListen === undefined ? {} : { metricsListen: plan.metricsListen }),
    hostKeyFiles: paths.hostKeys,
    shellSecretFile: paths.shellSecret,
    region: plan.region,
    cells: plan.cells,
    ...(ts === undefined
      ? {}
      : {
          topologyServiceAddress: ts.grpc,
          topologyServiceUrl: ts.http,
          cellEndpointScheme: 'http',
          cellEndpointPort: ts.cellEndpointPort,
        }),
    logLevel: plan.logLevel,
    ...(plan.tunnelProfile === undefined || plan.tunnelProfile === DEFAULT_TUNNEL_PROFILE
      ? {}
      : { tunnelProfile: plan.tunnelProfile }),
    ...(plan.shellJwtTtlSeconds === undefined || plan.shellJwtTtlSeconds === SHELL_TTL_SECONDS
      ? {}
      : { shellJwtTtlSeconds: plan.shellJwtTtlSeconds }),
  };
}

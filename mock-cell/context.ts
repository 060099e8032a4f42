import type { JwtKey } from '../lib/jwt.js';
import type { AccessChecker } from './access.js';
import type { ClaimSync } from './claim-sync.js';
import type { Replicas } from './geo/replica.js';
import type { GeoRole } from './geo/site.js';
import type { HookLog } from './hook-log.js';
import type { SessionStore } from './sessions.js';
import type { TokenStore } from './tokens.js';
import type { TopologyModel } from './topology.js';
import type { CiJobTokens } from './world/job-tokens.js';
import type { RailsWorld } from './world/rails-world.js';

/** What the routes of one cell's app share. */
export interface CellContext {
  model: TopologyModel;
  /** This app's cell name. */
  cell: string;
  /** This app's cell id (the `c` of its tokens, the prefix of its sessions). */
  cellId: number;
  access: AccessChecker;
  hookLog: HookLog;
  /** Shared by every cell of the process. */
  sessions: SessionStore;
  /** Shared by every cell of the process. */
  tokens: TokenStore;
  shellKey: JwtKey;
  workhorseKey: JwtKey;
  gitalyToken: string;
  /** Claim registration with the Topology Service, when one is configured. */
  claims?: ClaimSync | undefined;
  /** The cell's Geo role (`geo/`): the primary, or a secondary site with its replicas. */
  geo?: { role: GeoRole; replicas: Replicas | undefined } | undefined;
  /** Faults, organization maintenance and the journal sink (`world/`); shared by the cells of a process. */
  world: RailsWorld;
  /** The process's `glcbt-` CI job token minter. */
  jobTokens: CiJobTokens;
}

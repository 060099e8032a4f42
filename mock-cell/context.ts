import type { JwtKey } from '../lib/jwt.js';
import type { AccessChecker } from './access.js';
import type { HookLog } from './hook-log.js';
import type { TopologyModel } from './topology.js';

/** What the routes of one cell's app share. */
export interface CellContext {
  model: TopologyModel;
  /** This app's cell name. */
  cell: string;
  access: AccessChecker;
  hookLog: HookLog;
  shellKey: JwtKey;
  workhorseKey: JwtKey;
  gitalyToken: string;
}

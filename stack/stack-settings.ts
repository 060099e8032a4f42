import { parseArgs } from 'node:util';
import {
  bool,
  ConfigError,
  int,
  loadConfig,
  oneOf,
  optionalStr,
  str,
  type Validator,
} from '../lib/config.js';
import { TUNNEL_PROFILE_NAMES, type TunnelProfileName } from '../lib/contracts/tunnel-profile.js';
import { DEFAULT_RESTART_POLICY } from './restart-policy.js';
import { DEMO_TOPOLOGY_FILE } from './topology-file-load.js';

/**
 * The settings of `node dist/stack/main.js` (`npm start`): defaults → `STACK_*` environment →
 * command-line flags (which win) → validated and frozen, as `lib/config.ts` does for every service.
 */
export interface StackSettings {
  /** `--topology` / `STACK_TOPOLOGY`: the topology file (default: the package's topologies/demo.json). */
  topology: string;
  dataDir: string;
  portOffset: number;
  /** `--free-ports` / `STACK_FREE_PORTS`: every port picked free at start instead of defaults + offset. */
  freePorts: boolean;
  logLevel: string;
  /** `--geo` / `STACK_GEO`: the Geo secondaries the file asks for run (`on`) or not (`off`). */
  geo: 'on' | 'off';
  /** `STACK_RESTART_STABLE_MS`: up this long, a service's next death counts as its first again. */
  restartStableMs: number;
  /**
   * `--edge` / `STACK_EDGE`: the edge between the routers and every cell: `none`, `nginx`, `haproxy`,
   * `cloudflare`, or an edge file (`edge/figures.ts`); default the topology file's `edge`, else none.
   */
  edge: string | undefined;
  /** `--edge-time-scale` / `STACK_EDGE_TIME_SCALE`: every time of the edge multiplied by it (default 1). */
  edgeTimeScale: number;

  /** `--tunnel-profile` / `STACK_TUNNEL_PROFILE`: overrides the file's `routers.tunnelProfile`. */
  tunnelProfile: TunnelProfileName | undefined;
}

export const USAGE =
  'usage: node dist/stack/main.js [--topology FILE] [--data-dir DIR] [--port-offset N | --free-ports] [--log-level L] [--geo on|off] [--tunnel-profile P] [--edge KIND|FILE] [--edge-time-scale X] [--parent-pid P] [--ephemeral]';

const timeScale: Validator<number> = (v, name) => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !(n > 0 && n <= 10))
    throw new ConfigError(`${name} must be a number above 0 and at most 10, got ${JSON.stringify(v)}`);
  return n;
};

/** The flags as the environment variables they override. */
function flagsAsEnv(argv: readonly string[]): Record<string, string> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        topology: { type: 'string' },
        'data-dir': { type: 'string' },
        'port-offset': { type: 'string' },
        'free-ports': { type: 'boolean' },
        'log-level': { type: 'string' },
        geo: { type: 'string' },
        edge: { type: 'string' },
        'edge-time-scale': { type: 'string' },
        'tunnel-profile': { type: 'string' },
        // The world flags, read by `world-args.ts`.
        'parent-pid': { type: 'string' },
        ephemeral: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    throw new ConfigError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values['port-offset'] !== undefined && values['free-ports'] === true)
    throw new ConfigError(`--port-offset and --free-ports exclude each other\n${USAGE}`);
  const env: Record<string, string> = {};
  const set = (name: string, value: string | boolean | undefined) => {
    if (value !== undefined) env[name] = String(value);
  };
  set('STACK_TOPOLOGY', values.topology);
  set('STACK_DATA_DIR', values['data-dir']);
  set('STACK_PORT_OFFSET', values['port-offset']);
  set('STACK_FREE_PORTS', values['free-ports']);
  if (values['port-offset'] !== undefined) env.STACK_FREE_PORTS = 'false';
  if (values['free-ports'] === true) env.STACK_PORT_OFFSET = '0';
  set('STACK_LOG_LEVEL', values['log-level']);
  set('STACK_GEO', values.geo);
  set('STACK_EDGE', values.edge);
  set('STACK_EDGE_TIME_SCALE', values['edge-time-scale']);
  set('STACK_TUNNEL_PROFILE', values['tunnel-profile']);
  return env;
}

export function stackSettings(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): StackSettings {
  const settings = loadConfig<StackSettings>(
    {
      topology: { validate: str, default: DEMO_TOPOLOGY_FILE, env: 'STACK_TOPOLOGY' },
      dataDir: { validate: str, default: './var', env: 'STACK_DATA_DIR' },
      portOffset: { validate: int(0, 50_000), default: 0, env: 'STACK_PORT_OFFSET' },
      freePorts: { validate: bool, default: false, env: 'STACK_FREE_PORTS' },
      logLevel: { validate: str, default: 'info', env: 'STACK_LOG_LEVEL' },
      geo: { validate: oneOf('on', 'off'), default: 'on', env: 'STACK_GEO' },
      tunnelProfile: {
        validate: (v, name) =>
          v === undefined || v === '' ? undefined : oneOf(...TUNNEL_PROFILE_NAMES)(v, name),
        default: undefined,
        env: 'STACK_TUNNEL_PROFILE',
      },
      restartStableMs: {
        validate: int(1000),
        default: DEFAULT_RESTART_POLICY.stableMs,
        env: 'STACK_RESTART_STABLE_MS',
      },
      edge: { validate: optionalStr, default: '', env: 'STACK_EDGE' },
      edgeTimeScale: { validate: timeScale, default: '1', env: 'STACK_EDGE_TIME_SCALE' },
    },
    { prefix: 'STACK', env: { ...env, ...flagsAsEnv(argv) } },
  );
  if (settings.freePorts && settings.portOffset !== 0)
    throw new ConfigError('STACK_PORT_OFFSET and STACK_FREE_PORTS exclude each other');
  return settings;
}

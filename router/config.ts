import {
  ConfigError,
  hostPort,
  httpUrl,
  int,
  loadConfig,
  oneOf,
  readConfigFile,
  type Schema,
  str,
  type Validator,
} from '../lib/config.js';

/** One cell as the router sees it: `url` is the cell's bridge (internal API and tunnels). */
export interface CellConfig {
  id: number;
  name: string;
  legacy: boolean;
  region: string;
  url: string;
}

export interface Listen {
  host: string;
  port: number;
}

export interface RouterConfig {
  sshListen: Listen;
  httpListen: Listen;
  hostKeyFile: string;
  shellSecretFile: string;
  /** The router's own region: learn requests and key lookups go to this region's cells first. */
  region: string;
  cells: CellConfig[];
  learnCacheMaxEntries: number;
  /** Upper bound for a learned route's lifetime, whatever `cache_ttl` the cell answers. */
  learnCacheMaxTtlMs: number;
  metricsListen: Listen | undefined;
  shutdownGraceMs: number;
  /** Time a client has to authenticate after connecting (gitlab-sshd `login_grace_time`). */
  loginGraceMs: number;
  /** SSH keepalive interval (gitlab-sshd `client_alive_interval`). */
  keepaliveIntervalMs: number;
  /** Deadline of one internal API call (authorized_keys, discover, learn, allowed). */
  internalApiTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

function isListen(v: unknown): v is Listen {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Listen).host === 'string' &&
    Number.isInteger((v as Listen).port)
  );
}

/** `host:port`; defaults are given already parsed. */
const listenAddress: Validator<Listen> = (v, name) => (isListen(v) ? v : hostPort(v, name));

const optionalListenAddress: Validator<Listen | undefined> = (v, name) =>
  v === undefined || v === '' ? undefined : listenAddress(v, name);

function field<T>(obj: Record<string, unknown>, key: string, where: string, validate: Validator<T>): T {
  return validate(obj[key], `${where}.${key}`);
}

/** `cells`: a JSON array (or a JSON string of one, from the environment) of `{id, name, legacy, region, url}`. */
export const cellsValidator: Validator<CellConfig[]> = (v, name) => {
  let raw = v;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new ConfigError(`${name} must be a JSON array of cells`);
    }
  }
  if (!Array.isArray(raw) || raw.length === 0)
    throw new ConfigError(`${name} must be a non-empty array of cells`);
  const cells = raw.map((item: unknown, i): CellConfig => {
    const where = `${name}[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new ConfigError(`${where} must be an object {id, name, legacy, region, url}`);
    }
    const obj = item as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (!['id', 'name', 'legacy', 'region', 'url'].includes(key)) {
        throw new ConfigError(`${where} has an unknown key "${key}"`);
      }
    }
    const legacy = obj.legacy ?? false;
    if (typeof legacy !== 'boolean') throw new ConfigError(`${where}.legacy must be true or false`);
    return {
      id: field(obj, 'id', where, int(1)),
      name: field(obj, 'name', where, str),
      legacy,
      region: field(obj, 'region', where, str),
      url: field(obj, 'url', where, httpUrl),
    };
  });
  const legacyCount = cells.filter((c) => c.legacy).length;
  if (legacyCount !== 1)
    throw new ConfigError(`${name} must have exactly one legacy cell, found ${legacyCount}`);
  const names = new Set<string>();
  const ids = new Set<number>();
  for (const c of cells) {
    if (names.has(c.name)) throw new ConfigError(`${name} has the cell name "${c.name}" twice`);
    if (ids.has(c.id)) throw new ConfigError(`${name} has the cell id ${c.id} twice`);
    names.add(c.name);
    ids.add(c.id);
  }
  return cells;
};

export const routerSchema: Schema<RouterConfig> = {
  sshListen: { validate: listenAddress, default: { host: '127.0.0.1', port: 2222 } },
  httpListen: { validate: listenAddress, default: { host: '127.0.0.1', port: 8080 } },
  hostKeyFile: { validate: str },
  shellSecretFile: { validate: str },
  region: { validate: str },
  cells: { validate: cellsValidator },
  learnCacheMaxEntries: { validate: int(1, 10_000_000), default: 10_000 },
  learnCacheMaxTtlMs: { validate: int(0), default: 300_000 },
  metricsListen: { validate: optionalListenAddress, default: undefined },
  shutdownGraceMs: { validate: int(0), default: 10_000 },
  loginGraceMs: { validate: int(1), default: 60_000 },
  keepaliveIntervalMs: { validate: int(0), default: 15_000 },
  internalApiTimeoutMs: { validate: int(1), default: 30_000 },
  logLevel: {
    validate: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    default: 'info',
  },
};

/** defaults → `--config <file>` → `ROUTER_*` environment → validate → freeze. */
export function loadRouterConfig(
  argv: readonly string[] = process.argv,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<RouterConfig> {
  const config = loadConfig(routerSchema, { prefix: 'ROUTER', env, file: readConfigFile(argv) });
  if (!config.cells.some((c) => c.region === config.region)) {
    const regions = [...new Set(config.cells.map((c) => c.region))].join(', ');
    throw new ConfigError(`region (ROUTER_REGION) "${config.region}" has no cell; cells are in: ${regions}`);
  }
  return config;
}

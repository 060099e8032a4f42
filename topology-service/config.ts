import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import {
  bool,
  ConfigError,
  hostPort,
  int,
  loadConfig,
  oneOf,
  optionalStr,
  type Schema,
  str,
} from '../lib/config.js';
import { readSecretFile } from '../lib/secrets.js';

/** One cell as the Topology Service's `config.toml` `[[cells]]` describes it. */
export interface CellConfig {
  /** The legacy cell is 1; new cells start at 2. */
  id: number;
  /** Our name for it (the mock cell's and the router's cell name); sent as `CellInfo.name`. */
  name: string;
  /** What `proxy.address` answers: a bare host or `host:port` (gitlab-shell keeps the host only). */
  address: string;
  /** The prefix of its session cookies (`cell-2`); SESSION_PREFIX classifies by it. */
  sessionPrefix: string | undefined;
  sequenceRanges: readonly { minval: number; maxval: number }[];
}

export interface TopologySettings {
  /** gRPC listener (ClassifyService, CellService, ClaimService, HealthService). */
  grpcListen: { host: string; port: number };
  /** REST listener (`POST /v1/classify`, probes). */
  httpListen: { host: string; port: number };
  cells: readonly CellConfig[];
  /** Serve gitlab-shell HEAD's `claim` (field 4); false behaves as a server built from the newest proto. */
  acceptClaimField4: boolean;
  /** A cell claiming a key another cell holds: `move` takes it over (organization move), `reject` refuses. */
  claimConflict: 'move' | 'reject';
  /** PEM certificate and key: both listeners speak TLS. */
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** PEM CA bundle: clients must present a certificate it signed (mTLS). Needs TLS. */
  tlsClientCaFile: string | undefined;
  /** Cloudflare Access service token the REST side requires (`CF-Access-Client-Id`/`-Secret`). */
  cfAccessClientId: string | undefined;
  cfAccessClientSecretFile: string | undefined;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

/** What the listeners need from the TLS files, read once at start. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  clientCa: Buffer | undefined;
}

export type TopologyConfig = Readonly<
  TopologySettings & {
    tls: TlsMaterial | undefined;
    cfAccess: { clientId: string; clientSecret: string } | undefined;
  }
>;

const optionalAbsolutePath = (v: unknown, name: string): string | undefined => {
  const path = optionalStr(v, name);
  if (path !== undefined && !isAbsolute(path)) {
    throw new ConfigError(`${name} must be an absolute path, got ${JSON.stringify(path)}`);
  }
  return path;
};

function field(entry: Record<string, unknown>, key: string, name: string): unknown {
  if (!(key in entry)) throw new ConfigError(`${name}.${key} is missing`);
  return entry[key];
}

function parseRanges(v: unknown, name: string): { minval: number; maxval: number }[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new ConfigError(`${name} must be an array of {minval, maxval}`);
  return v.map((r: unknown, i) => {
    const at = `${name}[${i}]`;
    if (r === null || typeof r !== 'object') throw new ConfigError(`${at} must be {minval, maxval}`);
    const range = r as Record<string, unknown>;
    const minval = int(0)(field(range, 'minval', at), `${at}.minval`);
    const maxval = int(minval)(field(range, 'maxval', at), `${at}.maxval`);
    return { minval, maxval };
  });
}

const CELL_KEYS = new Set(['id', 'name', 'address', 'sessionPrefix', 'sequenceRanges']);

function parseCell(v: unknown, name: string): CellConfig {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new ConfigError(`${name} must be an object {id, name, address, sessionPrefix?, sequenceRanges?}`);
  }
  const entry = v as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (!CELL_KEYS.has(key)) throw new ConfigError(`${name} has an unknown setting "${key}"`);
  }
  const address = str(field(entry, 'address', name), `${name}.address`);
  if (/\s/.test(address)) throw new ConfigError(`${name}.address must not contain spaces`);
  return {
    id: int(1)(field(entry, 'id', name), `${name}.id`),
    name: str(field(entry, 'name', name), `${name}.name`),
    address,
    sessionPrefix: optionalStr(entry.sessionPrefix, `${name}.sessionPrefix`),
    sequenceRanges: parseRanges(entry.sequenceRanges, `${name}.sequenceRanges`),
  };
}

function unique(cells: CellConfig[], name: string, key: 'id' | 'name' | 'sessionPrefix'): void {
  const seen = new Set<unknown>();
  for (const cell of cells) {
    const value = cell[key];
    if (value === undefined) continue;
    if (seen.has(value)) throw new ConfigError(`${name}: two cells have ${key} ${JSON.stringify(value)}`);
    seen.add(value);
  }
}

/** `[{id, name, address, …}]`, from the file as an array or from the environment as a JSON string. */
const cellsValidator = (v: unknown, name: string): CellConfig[] => {
  let value = v;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ConfigError(`${name} must be a JSON array of cells`);
    }
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw new ConfigError(`${name} must be a non-empty array of {id, name, address, sessionPrefix?}`);
  }
  const cells = value.map((c: unknown, i) => parseCell(c, `${name}[${i}]`));
  for (const key of ['id', 'name', 'sessionPrefix'] as const) unique(cells, name, key);
  return cells;
};

const schema: Schema<TopologySettings> = {
  grpcListen: { validate: hostPort },
  httpListen: { validate: hostPort },
  cells: { validate: cellsValidator },
  acceptClaimField4: { validate: bool, default: true },
  claimConflict: { validate: oneOf('move', 'reject'), default: 'move' },
  tlsCertFile: { validate: optionalAbsolutePath, default: undefined },
  tlsKeyFile: { validate: optionalAbsolutePath, default: undefined },
  tlsClientCaFile: { validate: optionalAbsolutePath, default: undefined },
  cfAccessClientId: { validate: optionalStr, default: undefined },
  cfAccessClientSecretFile: { validate: optionalAbsolutePath, default: undefined },
  logLevel: {
    validate: oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'),
    default: 'info',
  },
};

function readPem(file: string, name: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${name}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Certificate and key together or neither; a client CA only with them. */
function loadTls(s: TopologySettings): TlsMaterial | undefined {
  if (s.tlsCertFile === undefined && s.tlsKeyFile === undefined) {
    if (s.tlsClientCaFile !== undefined)
      throw new ConfigError('tlsClientCaFile needs tlsCertFile and tlsKeyFile');
    return undefined;
  }
  if (s.tlsCertFile === undefined || s.tlsKeyFile === undefined) {
    throw new ConfigError('tlsCertFile and tlsKeyFile go together');
  }
  return {
    cert: readPem(s.tlsCertFile, 'tlsCertFile'),
    key: readPem(s.tlsKeyFile, 'tlsKeyFile'),
    clientCa: s.tlsClientCaFile === undefined ? undefined : readPem(s.tlsClientCaFile, 'tlsClientCaFile'),
  };
}

function loadCfAccess(s: TopologySettings): TopologyConfig['cfAccess'] {
  if (s.cfAccessClientId === undefined && s.cfAccessClientSecretFile === undefined) return undefined;
  if (s.cfAccessClientId === undefined || s.cfAccessClientSecretFile === undefined) {
    throw new ConfigError('cfAccessClientId and cfAccessClientSecretFile go together');
  }
  return {
    clientId: s.cfAccessClientId,
    clientSecret: readSecretFile(s.cfAccessClientSecretFile, 'CF-Access client secret'),
  };
}

/** defaults → file → `TOPOLOGY_*` env → validate → freeze; reads the TLS files and the CF-Access secret. */
export function loadTopologyConfig(
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): TopologyConfig {
  const settings = loadConfig(schema, { prefix: 'TOPOLOGY', env, file });
  return Object.freeze({ ...settings, tls: loadTls(settings), cfAccess: loadCfAccess(settings) });
}

import {
  ConfigError,
  hostPort,
  loadConfig,
  oneOf,
  optionalStr,
  type Schema,
  str,
  type Validator,
} from '../lib/config.js';
import type { TopologyModel } from './topology.js';

/** One cell served by this process: the cell's name in the topology and the address to bind. */
export interface ListenEntry {
  cell: string;
  host: string;
  port: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface MockCellConfig {
  topologyFile: string;
  /** File/JSON form: `[{cell, address: "host:port"}]`; env MOCK_CELL_LISTEN takes the same JSON. */
  listen: readonly ListenEntry[];
  shellSecretFile: string;
  workhorseSecretFile: string;
  gitalyTokenFile: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** gRPC `host:port` of the Topology Service the cells register their claims with; unset = none. */
  topologyService?: string | undefined;
  /** Serve the cells of `listen` as this Geo secondary site of the topology (`geoSites[].name`). */
  geoSite?: string | undefined;
}

const listen: Validator<ListenEntry[]> = (v, name) => {
  let value = v;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ConfigError(`${name} must be a JSON array of {cell, address}, got ${JSON.stringify(v)}`);
    }
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw new ConfigError(`${name} must be a non-empty array of {cell, address: "host:port"}`);
  }
  const entries = value.map((item: unknown, i): ListenEntry => {
    const at = `${name}[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new ConfigError(`${at} must be an object {cell, address}`);
    }
    const { cell, address, ...rest } = item as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new ConfigError(`${at} has unknown field "${extra[0]}"`);
    return { cell: str(cell, `${at}.cell`), ...hostPort(address, `${at}.address`) };
  });
  const seenCells = new Set<string>();
  const seenPorts = new Set<string>();
  entries.forEach((e, i) => {
    if (seenCells.has(e.cell)) throw new ConfigError(`${name}[${i}].cell "${e.cell}" is listed twice`);
    seenCells.add(e.cell);
    const addr = `${e.host}:${e.port}`;
    if (e.port !== 0 && seenPorts.has(addr))
      throw new ConfigError(`${name}[${i}].address ${addr} is listed twice`);
    seenPorts.add(addr);
  });
  return entries;
};

const schema: Schema<MockCellConfig> = {
  topologyFile: { validate: str },
  listen: { validate: listen },
  shellSecretFile: { validate: str },
  workhorseSecretFile: { validate: str },
  gitalyTokenFile: { validate: str },
  logLevel: { validate: oneOf(...LOG_LEVELS), default: 'info' },
  topologyService: {
    default: undefined,
    validate: (v, name) => {
      const s = optionalStr(v, name);
      if (s !== undefined) hostPort(s, name);
      return s;
    },
  },
  geoSite: { default: undefined, validate: optionalStr },
};

/** defaults → file → env (`MOCK_CELL_*`) → validate → freeze. */
export function loadMockCellConfig(
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<MockCellConfig> {
  return loadConfig(schema, { prefix: 'MOCK_CELL', env, file });
}

/** Every cell named in `listen` must exist in the topology. */
export function checkListenCells(config: Readonly<MockCellConfig>, model: TopologyModel): void {
  config.listen.forEach((e, i) => {
    if (!model.cell(e.cell)) {
      const known = model
        .cells()
        .map((c) => c.name)
        .join(', ');
      throw new ConfigError(`listen[${i}].cell: no cell "${e.cell}" in the topology (cells: ${known})`);
    }
  });
}

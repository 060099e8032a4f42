import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import {
  bool,
  ConfigError,
  hostPort,
  httpUrl,
  int,
  loadConfig,
  oneOf,
  optionalStr,
  type Schema,
  str,
} from '../lib/config.js';
import { readSecretFile } from '../lib/secrets.js';
import { type ConcurrencyLimit, concurrencyValidator } from './concurrency.js';

export interface GitalySettings {
  /** gRPC listen address. */
  listen: { host: string; port: number };
  /** storage name → absolute folder of bare repositories. */
  storages: Readonly<Record<string, string>>;
  /** File holding the shared Gitaly token (owner-only permissions). */
  tokenFile: string;
  /** The cell's Rails base URL, called by the receive-pack hooks. */
  gitlabUrl: string;
  /** The GitLab Shell secret file, used by the hooks to sign their internal API requests. */
  gitlabSecretFile: string;
  uploadPackNegotiationTimeoutMs: number;
  uploadArchiveNegotiationTimeoutMs: number;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
  /** Where hook wrappers are written (`<runtimeDir>/hooks`); a fresh temporary folder removed at stop when unset. */
  runtimeDir: string | undefined;
  /** A second listener speaking TLS (Gitaly's `tls_listen_addr`); needs `tlsCertFile` and `tlsKeyFile`. */
  listenTls: { host: string; port: number } | undefined;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** A unix socket listener (Gitaly's `socket_path`); a stale socket file there is replaced. */
  listenUnix: string | undefined;
  /** Serve the bidi `SSHUploadPack` as Gitaly < 17.8 did, instead of UNIMPLEMENTED. */
  legacyUploadPack: boolean;
  /** yamux behaviour of the backchannel: hashicorp (Gitaly's default) or libp2p go-yamux (Gitaly 18.x option). */
  yamuxFlavour: 'hashicorp' | 'libp2p';
  /** Open an HTTP/2 client stream back to the client right after the handshake, as Gitaly < 17.11 did. */
  eagerBackchannel: boolean;
  /** How long the server waits for the client's `ok` (Gitaly: 5 s). */
  sidechannelHandshakeTimeoutMs: number;
  /** Emulation: announce a wrong id on every sidechannel, so the client must refuse it. */
  sidechannelWrongId: boolean;
  /** Remove receive-pack quarantines no process uses any more: at start, after failed pushes, periodically. */
  quarantineSweep: boolean;
  /** Time between two sweeps of every storage. */
  quarantineSweepIntervalMs: number;
  /** The cell this Gitaly belongs to, for its journal entries (the stack sets it; unset: null). */
  cell: string | undefined;
  /** Gitaly's `[[concurrency]]` limits per RPC and repository (`concurrency.ts`); none: nothing limited. */
  concurrency: readonly ConcurrencyLimit[];
}

/** Settings plus the token read from `tokenFile`. */
export type GitalyConfig = Readonly<GitalySettings & { token: string }>;

const absoluteDir = (path: unknown, name: string): string => {
  const dir = str(path, name);
  if (!isAbsolute(dir)) throw new ConfigError(`${name} must be an absolute path, got ${JSON.stringify(dir)}`);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    throw new ConfigError(`${name}: cannot access ${dir}: ${(err as Error).message}`);
  }
  if (!isDir) throw new ConfigError(`${name}: ${dir} is not a directory`);
  return dir;
};

/** Absolute path or unset; the folder is created at start if missing. */
const optionalAbsolutePath = (v: unknown, name: string): string | undefined => {
  const path = optionalStr(v, name);
  if (path !== undefined && !isAbsolute(path)) {
    throw new ConfigError(`${name} must be an absolute path, got ${JSON.stringify(path)}`);
  }
  return path;
};

const optionalHostPort = (v: unknown, name: string) =>
  v === undefined || v === '' ? undefined : hostPort(v, name);

/** `{name: absDir}`, from the file as an object or from the environment as a JSON string. */
const storagesValidator = (v: unknown, name: string): Record<string, string> => {
  let value = v;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ConfigError(`${name} must be a JSON object {"<storage>": "<absolute dir>"}`);
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(`${name} must be an object {"<storage>": "<absolute dir>"}`);
  }
  const entries = Object.entries(value);
  if (entries.length === 0) throw new ConfigError(`${name} must name at least one storage`);
  const out: Record<string, string> = {};
  for (const [storage, dir] of entries) {
    if (storage === '') throw new ConfigError(`${name} has an empty storage name`);
    out[storage] = absoluteDir(dir, `${name} storage ${JSON.stringify(storage)}`);
  }
  return out;
};

const schema: Schema<GitalySettings> = {
  listen: { validate: hostPort },
  storages: { validate: storagesValidator },
  tokenFile: { validate: str },
  gitlabUrl: { validate: httpUrl },
  gitlabSecretFile: { validate: str },
  uploadPackNegotiationTimeoutMs: { validate: int(1), default: 600_000 },
  uploadArchiveNegotiationTimeoutMs: { validate: int(1), default: 60_000 },
  logLevel: {
    validate: oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'),
    default: 'info',
  },
  runtimeDir: { validate: optionalAbsolutePath, default: undefined },
  listenTls: { validate: optionalHostPort, default: undefined },
  tlsCertFile: { validate: optionalAbsolutePath, default: undefined },
  tlsKeyFile: { validate: optionalAbsolutePath, default: undefined },
  listenUnix: { validate: optionalAbsolutePath, default: undefined },
  legacyUploadPack: { validate: bool, default: false },
  yamuxFlavour: { validate: oneOf('hashicorp', 'libp2p'), default: 'hashicorp' },
  eagerBackchannel: { validate: bool, default: false },
  sidechannelHandshakeTimeoutMs: { validate: int(1), default: 5000 },
  sidechannelWrongId: { validate: bool, default: false },
  quarantineSweep: { validate: bool, default: true },
  quarantineSweepIntervalMs: { validate: int(1000), default: 600_000 },
  cell: { validate: optionalStr, default: undefined },
  concurrency: { validate: concurrencyValidator, default: [] },
};

/** `listenTls` needs a readable certificate and key; they are pointless without it. */
function checkTls(settings: GitalySettings): void {
  const { listenTls, tlsCertFile, tlsKeyFile } = settings;
  if (listenTls === undefined) {
    if (tlsCertFile !== undefined || tlsKeyFile !== undefined) {
      throw new ConfigError('tlsCertFile and tlsKeyFile need listenTls (GITALY_LISTEN_TLS)');
    }
    return;
  }
  for (const [name, file] of [
    ['tlsCertFile', tlsCertFile],
    ['tlsKeyFile', tlsKeyFile],
  ] as const) {
    if (file === undefined) throw new ConfigError(`listenTls needs ${name}`);
    try {
      accessSync(file, constants.R_OK);
    } catch (err) {
      throw new ConfigError(`${name}: cannot read ${file}: ${(err as Error).message}`);
    }
  }
}

/**
 * defaults → file → `GITALY_*` env → validate → freeze. Reads the token (auth is always on: an empty
 * token file is refused) and checks that the hooks' shell secret is readable.
 */
export function loadGitalyConfig(
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): GitalyConfig {
  const settings = loadConfig(schema, { prefix: 'GITALY', env, file });
  checkTls(settings);
  const token = readSecretFile(settings.tokenFile, 'Gitaly token');
  readSecretFile(settings.gitlabSecretFile, 'GitLab Shell secret');
  return Object.freeze({ ...settings, token });
}

import {
  bool,
  ConfigError,
  hostPort,
  httpUrl,
  int,
  loadConfig,
  oneOf,
  optionalStr,
  readConfigFile,
  type Schema,
  str,
} from '../lib/config.js';
import {
  DEFAULT_TUNNEL_PROFILE,
  TUNNEL_PROFILE_NAMES,
  type TunnelProfileName,
} from '../lib/contracts/tunnel-profile.js';
import { SHELL_TTL_SECONDS } from '../lib/jwt-sign.js';
import {
  cellProtocol,
  cellsValidator,
  cidrList,
  fileList,
  listenAddress,
  notFoundDelayValidator,
  optionalListenAddress,
  stringList,
} from './config-validators.js';
import { checkSite } from './geo/site-learner.js';
import type { ProxyPolicy } from './ssh/listener.js';
import { type MaxStartups, maxStartupsValidator } from './ssh/startups.js';

/** One cell as the router sees it: `url` is the cell's bridge (internal API and tunnels). */
export interface CellConfig {
  id: number;
  name: string;
  legacy: boolean;
  region: string;
  url: string;
  /**
   * How an `http://` URL is spoken to: `http1` (HTTP/1.1, one connection per request, as
   * gitlab-shell) or `h2c` (cleartext HTTP/2, prior knowledge). Unset = the router's `cellProtocol`.
   * `https://` ignores it (ALPN decides).
   */
  protocol?: 'http1' | 'h2c';
}

export interface Listen {
  host: string;
  port: number;
}

export interface RouterConfig {
  sshListen: Listen;
  httpListen: Listen;
  /** One host key (the form of earlier configs); joins `hostKeyFiles`. */
  hostKeyFile: string | undefined;
  /** gitlab-sshd `host_key_files`: RSA, ECDSA, Ed25519 … (one of each type at most). */
  hostKeyFiles: string[];
  shellSecretFile: string;
  /** The router's own region: learn requests and key lookups go to this region's cells first. */
  region: string;
  cells: CellConfig[];
  /** The `protocol` of cells that name none (and of cells the Topology Service names): `http1`. */
  cellProtocol: 'http1' | 'h2c';
  learnCacheMaxEntries: number;
  /** Upper bound for a learned route's lifetime, whatever `cache_ttl` the cell answers. */
  learnCacheMaxTtlMs: number;
  metricsListen: Listen | undefined;
  shutdownGraceMs: number;
  /** Time a client has to authenticate after connecting (gitlab-sshd `login_grace_time`). */
  loginGraceMs: number;
  /** SSH keepalive interval (gitlab-sshd `client_alive_interval`). */
  keepaliveIntervalMs: number;
  /** Missed keepalive answers before a connection is dropped (OpenSSH `ClientAliveCountMax`). */
  keepaliveCountMax: number;
  /** Sessions at once on one SSH connection (gitlab-sshd `concurrent_sessions_limit`). */
  maxSessions: number;
  /** Unauthenticated connections cap, OpenSSH `MaxStartups` `start:rate:full`; undefined = off. */
  maxStartups: MaxStartups | undefined;
  /** Unauthenticated connections per source address (OpenSSH `PerSourceMaxStartups`); undefined = off. */
  perSourceMaxStartups: number | undefined;
  /** PROXY protocol v1/v2 on the SSH listener (gitlab-sshd `proxy_protocol`). */
  proxyProtocol: boolean;
  /** gitlab-sshd `proxy_policy`. */
  proxyPolicy: ProxyPolicy;
  /** CIDRs whose PROXY headers are trusted (gitlab-sshd `proxy_allowed`); empty = every peer. */
  proxyAllowed: string[];
  /** gitlab-sshd `proxy_header_timeout`. */
  proxyHeaderTimeoutMs: number;
  /** gitlab-sshd `trusted_user_ca_keys`: files of CA public keys whose user certificates log in. */
  trustedUserCaKeys: string[];
  /** gitlab-shell `pat.allowed_scopes` for `personal_access_token`; empty = every scope. */
  patAllowedScopes: string[];
  /** Deadline of one internal API call (authorized_keys, discover, learn, allowed). */
  internalApiTimeoutMs: number;
  /**
   * HTTP routing rules (seed 003 schema, JSON array). Undefined: the bundled
   * `router/rules/default-rules.json` (routable tokens and the session cookie).
   */
  rulesFile: string | undefined;
  /**
   * `[min, max]`: the HTTP front holds every `404` from a cell for a random time in this range, so
   * answer times do not tell which (far) cell said no (seed 000's timing leak). Undefined: off.
   */
  notFoundDelayMs: readonly [number, number] | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * `learn` (seed 000: the cells' learn endpoint), `topology` (gitlab-shell in Cells mode and the
   * HTTP Router: the Topology Service classifies; `router/topology/`) or `site` (the SSH entry of one
   * site, e.g. a Geo secondary: its one cell serves every path; `router/geo/`).
   */
  routing: 'learn' | 'topology' | 'site';
  /** `topology`: gRPC `host:port` of the Topology Service (gitlab-shell `topology_service.address`). */
  topologyServiceAddress: string | undefined;
  /** `topology`: REST base URL of the Topology Service (`POST /v1/classify` for the HTTP front's rules). */
  topologyServiceUrl: string | undefined;
  /** `topology`: gitlab-shell `cell_endpoint.scheme` and `.port`, applied to every `proxy.address`. */
  cellEndpointScheme: 'http' | 'https';
  cellEndpointPort: number | undefined;
  /** `topology`: deadline of one Classify attempt (gitlab-shell `topology_service.timeout`, 5 s). */
  topologyTimeoutMs: number;
  /**
   * The gitlab-shell release whose tunnel request shapes the router emits
   * (`lib/contracts/tunnel-profile.ts`): default the newest, `gitlab-shell-14.57.6`.
   */
  tunnelProfile: TunnelProfileName;
  /**
   * Seconds each tunnel request's Shell JWT (`ssh-upload-pack`, `ssh-receive-pack`) is valid, its
   * `exp - iat`: gitlab-shell's 60 by default; a world may shorten it so a case of an expiring token
   * takes seconds (the conformance kit's S13-lfs). 1–3600.
   */
  shellJwtTtlSeconds: number;
}

export const routerSchema: Schema<RouterConfig> = {
  sshListen: { validate: listenAddress, default: { host: '127.0.0.1', port: 2222 } },
  httpListen: { validate: listenAddress, default: { host: '127.0.0.1', port: 8080 } },
  hostKeyFile: { validate: optionalStr, default: undefined },
  hostKeyFiles: { validate: fileList, default: [] },
  shellSecretFile: { validate: str },
  region: { validate: str },
  cells: { validate: cellsValidator },
  cellProtocol: { validate: cellProtocol, default: 'http1' },
  learnCacheMaxEntries: { validate: int(1, 10_000_000), default: 10_000 },
  learnCacheMaxTtlMs: { validate: int(0), default: 300_000 },
  metricsListen: { validate: optionalListenAddress, default: undefined },
  shutdownGraceMs: { validate: int(0), default: 10_000 },
  loginGraceMs: { validate: int(1), default: 60_000 },
  keepaliveIntervalMs: { validate: int(0), default: 15_000 },
  internalApiTimeoutMs: { validate: int(1), default: 30_000 },
  keepaliveCountMax: { validate: int(1), default: 3 },
  maxSessions: { validate: int(1), default: 10 },
  maxStartups: { validate: maxStartupsValidator, default: undefined },
  perSourceMaxStartups: {
    validate: (v, name) => (v === undefined || v === '' || v === 'off' ? undefined : int(1)(v, name)),
    default: undefined,
  },
  proxyProtocol: { validate: bool, default: false },
  proxyPolicy: { validate: oneOf('use', 'require', 'reject', 'ignore'), default: 'use' },
  proxyAllowed: { validate: cidrList, default: [] },
  proxyHeaderTimeoutMs: { validate: int(1), default: 500 },
  patAllowedScopes: { validate: stringList('scopes'), default: [] },
  trustedUserCaKeys: { validate: fileList, default: [] },
  rulesFile: { validate: optionalStr, default: undefined },
  notFoundDelayMs: { validate: notFoundDelayValidator, default: undefined },
  logLevel: {
    validate: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    default: 'info',
  },
  routing: { validate: oneOf('learn', 'topology', 'site'), default: 'learn' },
  topologyServiceAddress: {
    validate: (v, name) => {
      const s = optionalStr(v, name);
      if (s !== undefined) hostPort(s, name);
      return s;
    },
    default: undefined,
  },
  topologyServiceUrl: {
    validate: (v, name) => (v === undefined || v === '' ? undefined : httpUrl(v, name)),
    default: undefined,
  },
  cellEndpointScheme: { validate: oneOf('http', 'https'), default: 'http' },
  cellEndpointPort: {
    validate: (v, name) => (v === undefined || v === '' ? undefined : int(1, 65535)(v, name)),
    default: undefined,
  },
  topologyTimeoutMs: { validate: int(1), default: 5000 },
  tunnelProfile: { validate: oneOf(...TUNNEL_PROFILE_NAMES), default: DEFAULT_TUNNEL_PROFILE },
  shellJwtTtlSeconds: { validate: int(1, 3600), default: SHELL_TTL_SECONDS },
};

/** The host key files, `hostKeyFiles` then `hostKeyFile`, each once. */
export function hostKeyFilesOf(config: Readonly<RouterConfig>): string[] {
  const files = [...config.hostKeyFiles];
  if (config.hostKeyFile && !files.includes(config.hostKeyFile)) files.push(config.hostKeyFile);
  return files;
}

/** `routing: "topology"` needs the service's address and the cell endpoint port. */
function checkTopology(config: Readonly<RouterConfig>): void {
  if (config.routing !== 'topology') return;
  if (!config.topologyServiceAddress)
    throw new ConfigError(
      'routing "topology" needs topologyServiceAddress (ROUTER_TOPOLOGY_SERVICE_ADDRESS)',
    );
  if (config.cellEndpointPort === undefined)
    throw new ConfigError('routing "topology" needs cellEndpointPort (ROUTER_CELL_ENDPOINT_PORT)');
}

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
  checkTopology(config);
  checkSite(config);
  if (hostKeyFilesOf(config).length === 0)
    throw new ConfigError('hostKeyFiles (ROUTER_HOST_KEY_FILES) needs at least one host key file');
  return config;
}

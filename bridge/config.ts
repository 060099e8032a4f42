import {
  ConfigError,
  hostPort,
  httpUrl,
  int,
  loadConfig,
  oneOf,
  optionalStr,
  type Schema,
  str,
  type Validator,
} from '../lib/config.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Sent to Rails as `Gitlab-Workhorse` on pre-authorization. */
export const BRIDGE_VERSION = 'gitlab-cells-bridge/0.1.0';

export interface Address {
  host: string;
  port: number;
}

export interface BridgeConfig {
  /** `host:port` serving HTTP/1.1, h2c and (with a certificate) TLS on one port. */
  listen: Address;
  /** The cell's Rails (pre-authorization and everything that is not a tunnel). */
  railsUrl: string;
  shellSecretFile: string;
  workhorseSecretFile: string;
  /** `host:port` for `/metrics`, `/readiness`, `/liveness`; absent = no metrics listener. */
  metricsListen: Address | undefined;
  /**
   * A second `host:port` serving exactly what `listen` serves: the cell's shell endpoint of the
   * gitlab-shell layout (one port shared by every cell, each cell on its own loopback address,
   * because gitlab-shell replaces the port of `proxy.address`). Absent = none.
   */
  shellListen: Address | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
  /** PEM certificate chain and key; both or neither. With them the port also speaks TLS (ALPN h2, http/1.1). */
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** HTTP/2 per-stream receive window (SETTINGS_INITIAL_WINDOW_SIZE). */
  h2StreamWindowBytes: number;
  /** HTTP/2 connection receive window (set with `session.setLocalWindowSize`). */
  h2ConnectionWindowBytes: number;
  /** HTTP/1.1 time allowed to receive the request headers. */
  headersTimeoutMs: number;
  /** HTTP/1.1 idle keep-alive connection lifetime. */
  keepAliveTimeoutMs: number;
  /** Pre-authorization call to Rails gives up after this long (answered 500). */
  preauthTimeoutMs: number;
  /** git HTTP upload-pack: the request body must have ended by then (Workhorse's 10 minutes). */
  uploadPackBodyTimeoutMs: number;
  /** Framed responses get a keepalive frame after this long without output. */
  responseKeepaliveMs: number;
  /** gRPC keepalive ping interval towards Gitaly (Gitaly refuses pings more often than every 10 s). */
  gitalyKeepaliveMs: number;
  /**
   * How upload-pack reaches Gitaly: `sidechannel` (`SSHUploadPackWithSidechannel` over the yamux
   * backchannel, every Gitaly since 14.x, the only way since 17.8) or `stream` (the bidi
   * `SSHUploadPack`, Gitaly ≤ 17.7 only).
   */
  gitalyUploadPack: 'sidechannel' | 'stream';
  /**
   * yamux receive window per backchannel stream (Gitaly's own clients use 256 KiB). 2 MiB, as
   * OpenSSH's channel window: at 256 KiB every 128 KiB of a pack cost a window update (a write that
   * wakes Gitaly), half of the bridge's JavaScript time on a clone.
   */
  gitalyYamuxWindowBytes: number;
  /** Extra CA certificates (PEM file) trusted for `tls://` Gitaly addresses, beside the system roots. */
  gitalyCaFile: string | undefined;
  /** Concurrent tunnels on this bridge; more are answered 503. 0 = unlimited. */
  maxTunnels: number;
  /** Concurrent tunnels per user (`gl_id`); more are answered 429. 0 = unlimited. */
  maxTunnelsPerUser: number;
  /** A tunnel with no bytes in either direction for this long is ended. 0 = never. */
  tunnelIdleTimeoutMs: number;
  /** A tunnel is ended after this long whatever it is doing. 0 = never. */
  tunnelMaxDurationMs: number;
  /** Largest receive-pack request body (git bytes after unframing). 0 = unlimited. */
  maxReceivePackBytes: number;
  /** On shutdown, in-flight tunnels get this long to finish before they are cancelled. */
  shutdownGraceMs: number;
  /** The cell this bridge fronts, for its journal entries (the stack sets it; unset: null). */
  cell: string | undefined;
}

const address: Validator<Address> = hostPort;

const optionalAddress: Validator<Address | undefined> = (v, name) =>
  v === undefined || v === '' ? undefined : address(v, name);

const MIB = 1024 * 1024;
/** HTTP/2 window sizes are 31-bit. */
const MAX_WINDOW = 2 ** 31 - 1;

const schema: Schema<BridgeConfig> = {
  listen: { validate: address },
  railsUrl: { validate: httpUrl },
  shellSecretFile: { validate: str },
  workhorseSecretFile: { validate: str },
  metricsListen: { validate: optionalAddress, default: undefined },
  shellListen: { validate: optionalAddress, default: undefined },
  logLevel: { validate: oneOf(...LOG_LEVELS), default: 'info' },
  tlsCertFile: { validate: optionalStr, default: undefined },
  tlsKeyFile: { validate: optionalStr, default: undefined },
  h2StreamWindowBytes: { validate: int(65535, MAX_WINDOW), default: 2 * MIB },
  h2ConnectionWindowBytes: { validate: int(65535, MAX_WINDOW), default: 16 * MIB },
  headersTimeoutMs: { validate: int(1000), default: 60_000 },
  keepAliveTimeoutMs: { validate: int(1000), default: 5_000 },
  preauthTimeoutMs: { validate: int(100), default: 30_000 },
  uploadPackBodyTimeoutMs: { validate: int(100), default: 600_000 },
  responseKeepaliveMs: { validate: int(100), default: 5_000 },
  gitalyKeepaliveMs: { validate: int(10_000), default: 20_000 },
  gitalyUploadPack: { validate: oneOf('sidechannel', 'stream'), default: 'sidechannel' },
  gitalyYamuxWindowBytes: { validate: int(256 * 1024, MAX_WINDOW), default: 2 * MIB },
  gitalyCaFile: { validate: optionalStr, default: undefined },
  maxTunnels: { validate: int(0), default: 1000 },
  // GitLab has no per-user cap on git operations in flight (a CI fleet on one deploy key would hit it).
  maxTunnelsPerUser: { validate: int(0), default: 0 },
  tunnelIdleTimeoutMs: { validate: int(0), default: 600_000 },
  tunnelMaxDurationMs: { validate: int(0), default: 6 * 3600_000 },
  maxReceivePackBytes: { validate: int(0), default: 0 },
  shutdownGraceMs: { validate: int(0), default: 10_000 },
  cell: { validate: optionalStr, default: undefined },
};

/** defaults → file → env (`BRIDGE_*`) → validate → freeze. */
export function loadBridgeConfig(
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<BridgeConfig> {
  const config = loadConfig(schema, { prefix: 'BRIDGE', env, file });
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    throw new ConfigError('tlsCertFile and tlsKeyFile must be set together');
  }
  if (config.h2ConnectionWindowBytes < config.h2StreamWindowBytes) {
    throw new ConfigError(
      `h2ConnectionWindowBytes (${config.h2ConnectionWindowBytes}) must be at least h2StreamWindowBytes (${config.h2StreamWindowBytes})`,
    );
  }
  return config;
}

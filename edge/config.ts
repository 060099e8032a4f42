/**
 * @file The settings of the edge service (`node dist/edge/main.js --config <file.json>`, `EDGE_*`
 * overrides): which proxy to run with which generated config, in which folder, and the addresses it
 * must be listening on before the service reports `listening`. The stack writes this file
 * (`stack/edge-plan.ts`).
 */
import { ConfigError, loadConfig, oneOf, type Schema, str, type Validator } from '../lib/config.js';
import type { EdgeProxy } from '../lib/contracts/edge-file.js';

export interface EdgeSettings {
  proxy: EdgeProxy;
  /** The proxy's generated config file (`nginx.conf` or `haproxy.cfg`). */
  configFile: string;
  /** The edge's folder: the proxy's pid file, logs and temp folders. */
  dir: string;
  /** Every `host:port` the proxy binds (one per cell). */
  listen: readonly string[];
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

const addresses: Validator<readonly string[]> = (v, name) => {
  const list = typeof v === 'string' ? v.split(',') : v;
  if (!Array.isArray(list) || list.length === 0 || list.some((a) => !/^[^\s:]+:\d{1,5}$/.test(String(a))))
    throw new ConfigError(`${name} must be a non-empty list of host:port, got ${JSON.stringify(v)}`);
  return Object.freeze(list.map(String));
};

export function loadEdgeSettings(
  file: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Readonly<EdgeSettings> {
  const schema: Schema<EdgeSettings> = {
    proxy: { validate: oneOf('nginx', 'haproxy') },
    configFile: { validate: str },
    dir: { validate: str },
    listen: { validate: addresses },
    logLevel: {
      validate: oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'),
      default: 'info',
    },
  };
  return loadConfig(schema, { prefix: 'EDGE', env, file });
}

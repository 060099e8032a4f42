import { readFileSync } from 'node:fs';
import { AppError } from './errors.js';

/**
 * Configuration loading shared by every service: defaults → file (--config <json>) → env
 * overrides (<PREFIX>_<KEY>) → validate → freeze. A bad value stops start-up with a message
 * that names the setting.
 */
export class ConfigError extends AppError {
  constructor(message: string) {
    super('CONFIG_INVALID', message, { statusCode: 500, system: true });
    this.name = 'ConfigError';
  }
}

export type Validator<T> = (value: unknown, name: string) => T;

export const str: Validator<string> = (v, name) => {
  if (typeof v !== 'string' || v === '') throw new ConfigError(`${name} must be a non-empty string`);
  return v;
};

export const optionalStr: Validator<string | undefined> = (v, name) =>
  v === undefined || v === '' ? undefined : str(v, name);

export function int(min: number, max = Number.MAX_SAFE_INTEGER): Validator<number> {
  return (v, name) => {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(v)}`);
    }
    return n;
  };
}

export const bool: Validator<boolean> = (v, name) => {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(v)}`);
};

export function oneOf<const T extends string>(...values: T[]): Validator<T> {
  return (v, name) => {
    if (typeof v !== 'string' || !(values as string[]).includes(v)) {
      throw new ConfigError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
    }
    return v as T;
  };
}

/** "host:port" (IPv6 in brackets) → parts. */
export const hostPort: Validator<{ host: string; port: number }> = (v, name) => {
  const s = str(v, name);
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(s);
  if (!m) throw new ConfigError(`${name} must look like host:port, got ${JSON.stringify(s)}`);
  const port = Number(m[3]);
  if (port > 65535) throw new ConfigError(`${name} has an invalid port ${port}`);
  return { host: (m[1] ?? m[2]) as string, port };
};

export const httpUrl: Validator<string> = (v, name) => {
  const s = str(v, name);
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new ConfigError(`${name} must be a URL, got ${JSON.stringify(s)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(s)}`);
  }
  return s.replace(/\/+$/, '');
};

/** `default` is a raw value, parsed and validated like file and env values. */
export type Schema<T> = { [K in keyof T]: { validate: Validator<T[K]>; default?: unknown; env?: string } };

/** Reads `--config <file>` from argv, if present. */
export function readConfigFile(argv: readonly string[]): Record<string, unknown> {
  const i = argv.indexOf('--config');
  if (i === -1) return {};
  const file = argv[i + 1];
  if (!file) throw new ConfigError('--config needs a file path');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`config file ${file} is not a JSON object: ${(err as Error).message}`);
  }
}

/**
 * Builds a frozen config from a schema. Key `fooBar` is read from the file as `fooBar` and from the
 * environment as `<PREFIX>_FOO_BAR` (env wins). Unknown file keys are rejected so typos surface.
 */
export function loadConfig<T extends object>(
  schema: Schema<T>,
  opts: { prefix: string; env?: NodeJS.ProcessEnv; file?: Record<string, unknown> },
): Readonly<T> {
  const env = opts.env ?? process.env;
  const file = opts.file ?? {};
  for (const key of Object.keys(file)) {
    if (!(key in schema)) throw new ConfigError(`unknown setting "${key}" in config file`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema) as [string, Schema<T>[keyof T]][]) {
    const envName = spec.env ?? `${opts.prefix}_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
    const raw = env[envName] !== undefined ? env[envName] : key in file ? file[key] : spec.default;
    if (raw === undefined && !('default' in spec)) {
      throw new ConfigError(`missing required setting ${key} (config file key "${key}" or env ${envName})`);
    }
    out[key] = raw === undefined ? undefined : spec.validate(raw, `${key} (${envName})`);
  }
  return deepFreeze(out) as Readonly<T>;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

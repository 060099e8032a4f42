/** @file The router's config validators: listen addresses, lists, CIDRs, the 404 delay and the cells. */
import { isIP } from 'node:net';
import { ConfigError, hostPort, httpUrl, int, oneOf, str, type Validator } from '../lib/config.js';
import type { CellConfig, Listen } from './config.js';

function isListen(v: unknown): v is Listen {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Listen).host === 'string' &&
    Number.isInteger((v as Listen).port)
  );
}

/** `host:port`; defaults are given already parsed. */
export const listenAddress: Validator<Listen> = (v, name) => (isListen(v) ? v : hostPort(v, name));

export const optionalListenAddress: Validator<Listen | undefined> = (v, name) =>
  v === undefined || v === '' ? undefined : listenAddress(v, name);

/** A JSON array of strings, or a comma-separated list (environment). */
export function stringList(what: string): Validator<string[]> {
  return (v, name) => {
    const raw = typeof v === 'string' ? (v.trim().startsWith('[') ? safeJson(v) : v.split(',')) : v;
    if (!Array.isArray(raw)) throw new ConfigError(`${name} must be a list of ${what}`);
    const items = raw.map((item: unknown) => (typeof item === 'string' ? item.trim() : item));
    return items.filter((item) => item !== '').map((item, i) => str(item, `${name}[${i}]`));
  };
}

export const fileList = stringList('file paths');

/** `proxyAllowed`: addresses or CIDRs (`10.0.0.0/8`, `2001:db8::/32`). */
export const cidrList: Validator<string[]> = (v, name) =>
  stringList('CIDRs')(v, name).map((cidr, i) => {
    const [address = '', prefix, extra] = cidr.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? 0 : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (family === 0 || extra !== undefined || bits < 0 || bits > (family === 4 ? 32 : 128))
      throw new ConfigError(`${name}[${i}] must be an address or CIDR, got ${JSON.stringify(cidr)}`);
    return cidr;
  });

function field<T>(obj: Record<string, unknown>, key: string, where: string, validate: Validator<T>): T {
  return validate(obj[key], `${where}.${key}`);
}

/** Upper bound of the 404 delay: longer than this would hold connections for no gain. */
export const MAX_NOT_FOUND_DELAY_MS = 60_000;

/**
 * `notFoundDelayMs`: `[min, max]` milliseconds (file), or `"min,max"` / `"[min,max]"` (environment);
 * absent, empty or `"off"` = no delay.
 */
export const notFoundDelayValidator: Validator<readonly [number, number] | undefined> = (v, name) => {
  if (v === undefined || v === '' || v === 'off') return undefined;
  let raw: unknown = v;
  if (typeof raw === 'string') {
    const text = raw.trim();
    raw = text.startsWith('[') ? safeJson(text) : text.split(',').map((x) => x.trim());
  }
  const usage = `${name} must be [min, max] milliseconds with 0 <= min <= max <= ${MAX_NOT_FOUND_DELAY_MS}`;
  if (!Array.isArray(raw) || raw.length !== 2) throw new ConfigError(`${usage}, got ${JSON.stringify(v)}`);
  const check = int(0, MAX_NOT_FOUND_DELAY_MS);
  const min = check(raw[0], `${name}[0]`);
  const max = check(raw[1], `${name}[1]`);
  if (min > max) throw new ConfigError(`${usage}, got min ${min} > max ${max}`);
  return [min, max];
};

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** How `http://` cells are spoken to: `http1` (as gitlab-shell) or `h2c`. */
export const cellProtocol = oneOf('http1', 'h2c');

/** A cell's own `protocol`; unset = the router's `cellProtocol`. */
const optionalCellProtocol: Validator<'http1' | 'h2c' | undefined> = (v, name) =>
  v === undefined ? undefined : cellProtocol(v, name);

/**
 * `cells`: a JSON array (or a JSON string of one, from the environment) of
 * `{id, name, legacy, region, url, protocol?}`.
 */
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
      throw new ConfigError(`${where} must be an object {id, name, legacy, region, url, protocol?}`);
    }
    const obj = item as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (!['id', 'name', 'legacy', 'region', 'url', 'protocol'].includes(key)) {
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
      protocol: field(obj, 'protocol', where, optionalCellProtocol),
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

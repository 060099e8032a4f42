import { ControlArgumentError } from '../../lib/world-channel.js';

/**
 * Faults a world's control API programs into one cell (`rails fault`): requests whose path equals
 * `endpoint` (or starts with it when it ends in `*`), optionally of one method, get the programmed
 * answer instead of the real one — a status with a body and headers, a 3xx redirect, a connection
 * reset — or the real answer after a delay. `times` bounds how many requests a fault takes.
 */

export interface FaultSpec {
  endpoint: string;
  method?: string;
  status?: number;
  /** JSON (object, array, number…) or text. */
  body?: unknown;
  headers?: Record<string, string>;
  latencyMs?: number;
  reset?: boolean;
  redirect?: { status: number; location: string };
  times?: number;
}

export interface Fault extends FaultSpec {
  id: string;
  /** Requests it may still take; undefined = until cleared. */
  remaining?: number;
}

/** What decides a matched request: an answer of its own, a reset, or only a delay of the real answer. */
export type FaultKind = 'answer' | 'redirect' | 'reset' | 'latency';

export function faultKind(f: FaultSpec): FaultKind {
  if (f.reset === true) return 'reset';
  if (f.redirect !== undefined) return 'redirect';
  if (f.status !== undefined || f.body !== undefined) return 'answer';
  return 'latency';
}

const MAX_LATENCY_MS = 120_000;

function bad(message: string): never {
  throw new ControlArgumentError(message);
}

function optionalInt(
  args: Record<string, unknown>,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const v = args[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    bad(`${name} must be an integer from ${min} to ${max}`);
  return v;
}

function headersArg(v: unknown): Record<string, string> | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('headers must be an object of strings');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string' && typeof val !== 'number') bad(`headers.${k} must be a string`);
    out[k.toLowerCase()] = String(val);
  }
  return out;
}

function redirectArg(v: unknown): FaultSpec['redirect'] {
  if (v === undefined) return undefined;
  const r = v as { status?: unknown; location?: unknown };
  if (typeof v !== 'object' || v === null) bad('redirect must be {status, location}');
  if (typeof r.status !== 'number' || !Number.isInteger(r.status) || r.status < 300 || r.status > 399)
    bad('redirect.status must be a 3xx status');
  if (typeof r.location !== 'string' || r.location === '')
    bad('redirect.location must be a non-empty string');
  return { status: r.status, location: r.location };
}

/** Validates the arguments of `rails fault` (throws ControlArgumentError naming the bad one). */
export function parseFaultSpec(args: Record<string, unknown>): FaultSpec {
  const endpoint = args.endpoint;
  if (typeof endpoint !== 'string' || !endpoint.startsWith('/'))
    bad('endpoint must be a path starting with "/" (a trailing "*" matches a prefix)');
  const method = args.method;
  if (method !== undefined && (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method)))
    bad('method must be an HTTP method such as "POST"');
  if (args.reset !== undefined && typeof args.reset !== 'boolean') bad('reset must be a boolean');
  const retryAfter = optionalInt(args, 'retryAfter', 0, 86_400);
  const headers = headersArg(args.headers);
  const spec: FaultSpec = {
    endpoint,
    ...(method === undefined ? {} : { method: method.toUpperCase() }),
    ...(args.body === undefined ? {} : { body: args.body }),
    ...(args.reset === true ? { reset: true } : {}),
  };
  const status = optionalInt(args, 'status', 100, 599);
  const latencyMs = optionalInt(args, 'latencyMs', 0, MAX_LATENCY_MS);
  const times = optionalInt(args, 'times', 1, 1_000_000);
  const redirect = redirectArg(args.redirect);
  if (status !== undefined) spec.status = status;
  if (latencyMs !== undefined) spec.latencyMs = latencyMs;
  if (times !== undefined) spec.times = times;
  if (redirect !== undefined) spec.redirect = redirect;
  if (headers !== undefined || retryAfter !== undefined)
    spec.headers = { ...headers, ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }) };
  const kinds = [
    spec.reset === true,
    redirect !== undefined,
    status !== undefined || spec.body !== undefined,
  ];
  if (kinds.filter(Boolean).length > 1) bad('give one of status/body, redirect or reset');
  if (kinds.every((k) => !k) && latencyMs === undefined)
    bad('a fault needs status, body, redirect, reset or latencyMs');
  return spec;
}

function matches(f: Fault, method: string, path: string): boolean {
  if (f.method !== undefined && f.method !== method) return false;
  return f.endpoint.endsWith('*') ? path.startsWith(f.endpoint.slice(0, -1)) : path === f.endpoint;
}

/** The faults of one cell, first programmed first matched. */
export class FaultTable {
  #faults: Fault[] = [];
  #next = 1;

  constructor(private readonly cell: string) {}

  add(spec: FaultSpec): Fault {
    const fault: Fault = { ...spec, id: `${this.cell}-fault-${this.#next++}` };
    if (spec.times !== undefined) fault.remaining = spec.times;
    this.#faults.push(fault);
    return fault;
  }

  /** The fault that takes this request (counting it against `times`), if any. */
  take(method: string, path: string): Fault | undefined {
    const fault = this.#faults.find((f) => matches(f, method, path));
    if (fault?.remaining !== undefined) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.#faults = this.#faults.filter((f) => f !== fault);
    }
    return fault;
  }

  list(): readonly Fault[] {
    return this.#faults;
  }

  clear(): number {
    const n = this.#faults.length;
    this.#faults = [];
    return n;
  }
}

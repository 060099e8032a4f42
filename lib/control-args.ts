/**
 * @file Checking the arguments of a world control op (`lib/world-channel.ts` `onControl`): each
 * helper returns the value in its type or throws `ControlArgumentError` naming the argument.
 */
import { status } from '@grpc/grpc-js';
import { ControlArgumentError } from './world-channel.js';

export type ControlArgs = Record<string, unknown>;

/** A string argument; `undefined` when absent and not `required`. */
export function stringArg(args: ControlArgs, name: string): string | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ControlArgumentError(`${name} must be a string`);
  return v;
}

export function requiredStringArg(args: ControlArgs, name: string): string {
  const v = stringArg(args, name);
  if (v === undefined) throw new ControlArgumentError(`${name} is required`);
  return v;
}

/** A whole number in `[min, max]`; `fallback` when absent (required when `fallback` is undefined). */
export function intArg(args: ControlArgs, name: string, min: number, max: number, fallback?: number): number {
  const v = args[name];
  if (v === undefined || v === null) {
    if (fallback === undefined) throw new ControlArgumentError(`${name} is required`);
    return fallback;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new ControlArgumentError(`${name} must be a whole number from ${min} to ${max}`);
  return v;
}

/** One of `choices`; `fallback` when absent (required when `fallback` is undefined). */
export function oneOfArg<T extends string>(
  args: ControlArgs,
  name: string,
  choices: readonly T[],
  fallback?: T,
): T {
  const v = args[name];
  if (v === undefined || v === null) {
    if (fallback === undefined) throw new ControlArgumentError(`${name} is required (${choices.join(', ')})`);
    return fallback;
  }
  if (typeof v !== 'string' || !(choices as readonly string[]).includes(v))
    throw new ControlArgumentError(`${name} must be one of ${choices.join(', ')}`);
  return v as T;
}

/** A JSON object argument, or undefined when absent. */
export function objectArg(args: ControlArgs, name: string): ControlArgs | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new ControlArgumentError(`${name} must be an object`);
  return v as ControlArgs;
}

/** Rejects arguments the op does not know, so a typo is not silently ignored. */
export function onlyArgs(args: ControlArgs, known: readonly string[]): void {
  const extra = Object.keys(args).filter((k) => !known.includes(k));
  if (extra.length > 0) throw new ControlArgumentError(`unknown argument ${extra.join(', ')}`);
}

/** A gRPC status code name other than `OK` (`NOT_FOUND`, `UNAVAILABLE`, …) → its number. */
export function grpcCodeArg(args: ControlArgs, name: string): { name: string; code: status } {
  const v = requiredStringArg(args, name);
  const code = (status as unknown as Record<string, unknown>)[v];
  if (typeof code !== 'number' || code === status.OK)
    throw new ControlArgumentError(
      `${name} must be a gRPC status code name other than OK, got ${JSON.stringify(v)}`,
    );
  return { name: v, code };
}

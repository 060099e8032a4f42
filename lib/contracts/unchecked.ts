/**
 * @file Reading a contract's JSON from another process: the field names are the contract's (a typo
 * does not compile), the values are `unknown` until the consumer has checked them.
 */

/** A received JSON object of contract `T`: `T`'s field names, values not yet checked. */
export type Unchecked<T> = { readonly [K in keyof T]?: unknown };

/** `v` when it is a JSON object (not null, not an array), for reading as contract `T`. */
export function asObject<T = Record<string, unknown>>(v: unknown): Unchecked<T> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Unchecked<T>) : undefined;
}

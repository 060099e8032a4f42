/**
 * @file How every service writes the addresses it bound (its `listening` line, URLs): `host:port`
 * with an IPv6 host in brackets. The stack's supervisor (`stack/supervisor.ts`) compares these
 * strings with the addresses it planned, so every service must spell them the same way.
 */
import type { AddressInfo } from 'node:net';

/** A host as it appears before `:port` or in a URL: `::1` → `[::1]`. */
export function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** `127.0.0.1:2222`, `[::1]:2222`. */
export function formatHostPort(host: string, port: number): string {
  return `${hostForUrl(host)}:${port}`;
}

/** The `host:port` of a bound socket (`server.address()`); undefined for none. */
export function formatAddress(bound: AddressInfo | undefined): string | undefined {
  return bound ? formatHostPort(bound.address, bound.port) : undefined;
}

/** `http://127.0.0.1:3001` for a bound socket. */
export function httpUrl(bound: AddressInfo): string {
  return `http://${formatHostPort(bound.address, bound.port)}`;
}

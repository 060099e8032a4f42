// The bridge's error registry (every code is in README's error table). Before the tunnel's `200`
// an error becomes its HTTP status with a short text body; after it, it travels in-band (framed: an
// error frame with `code`; compatible: appended text, see `response-encoder.ts`). `system` marks
// faults that are ours or the backends'.
import { defineError } from '../lib/errors.js';

/** Rails could not be reached (or did not answer in time) for pre-authorization. */
export const PreauthUnavailable = defineError('BRIDGE_PREAUTH_UNAVAILABLE', 500, true);
/** Rails said yes but with a body we cannot use. */
export const PreauthInvalid = defineError('BRIDGE_PREAUTH_INVALID', 500, true);
/** `GitalyServer.address` is not a `tcp://host:port` address. */
export const GitalyAddressInvalid = defineError('BRIDGE_GITALY_ADDRESS', 500, true);
/** The request body is not valid `Gitlab-Shell-Body-Framing: v1`. */
export const BadFrame = defineError('BRIDGE_BAD_FRAME', 400, false);
/** Concurrent tunnel limit of this bridge reached. */
export const TooManyTunnels = defineError('BRIDGE_TOO_MANY_TUNNELS', 503, false);
/** Concurrent tunnel limit of one user reached. */
export const TooManyUserTunnels = defineError('BRIDGE_TOO_MANY_USER_TUNNELS', 429, false);
/** No bytes in either direction for `tunnelIdleTimeoutMs`. */
export const IdleTimeout = defineError('BRIDGE_IDLE_TIMEOUT', 408, false);
/** The tunnel ran longer than `tunnelMaxDurationMs`. */
export const TunnelTimeout = defineError('BRIDGE_TUNNEL_TIMEOUT', 408, false);
/** receive-pack body larger than `maxReceivePackBytes`. */
export const BodyTooLarge = defineError('BRIDGE_BODY_TOO_LARGE', 413, false);
/** The bridge is shutting down (new tunnel refused, or in-flight tunnel past the grace period). */
export const ShuttingDown = defineError('BRIDGE_SHUTTING_DOWN', 503, true);

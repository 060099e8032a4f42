/**
 * @file The clock JWT signers read (`lib/jwt-sign.ts` and every service that stamps `iat`/`exp`): the
 * real time plus a skew a world's control API may set (`world clockSkew`), so a test can make one side
 * sign tokens from the past or the future and watch the other side's expiry handling.
 */
let skewMs = 0;

/** Milliseconds since the epoch as this process's signers see them. */
export function signingNowMs(): number {
  return Date.now() + skewMs;
}

/** Whole seconds since the epoch as this process's signers see them (`iat`). */
export function signingNowSeconds(): number {
  return Math.floor(signingNowMs() / 1000);
}

/** Sets the skew (positive: the future). 0 restores the real clock. */
export function setSigningSkewMs(ms: number): void {
  skewMs = ms;
}

export function signingSkewMs(): number {
  return skewMs;
}

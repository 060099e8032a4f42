import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { jwtKey, signShellJwt, signWorkhorseJwt, verifyShellJwt, verifyWorkhorseJwt } from './jwt.js';

const key = jwtKey('  0123456789abcdef0123456789abcdef\n');
const otherKey = jwtKey('ffffffffffffffffffffffffffffffff');
const now = () => Math.floor(Date.now() / 1000);

describe('shell JWT', () => {
  it('round-trips gl_id with HS256, iss gitlab-shell and a 60 s expiry', async () => {
    const token = await signShellJwt(key, 'user-2');
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload.iss).toBe('gitlab-shell');
    expect(payload.exp - payload.iat).toBe(60);
    expect(await verifyShellJwt(key, token, { requireGlId: true })).toEqual({
      ok: true,
      claims: { gl_id: 'user-2' },
    });
  });

  it('trims the secret like GitLab, so a secret file with a newline still matches', async () => {
    const token = await signShellJwt(jwtKey('0123456789abcdef0123456789abcdef'), 'user-1');
    expect((await verifyShellJwt(key, token)).ok).toBe(true);
  });

  it('omits gl_id when empty and rejects it when required', async () => {
    const token = await signShellJwt(key);
    expect(await verifyShellJwt(key, token)).toEqual({ ok: true, claims: {} });
    expect(await verifyShellJwt(key, token, { requireGlId: true })).toEqual({
      ok: false,
      reason: 'missing-claim',
    });
  });

  it('accepts 60 s of leeway after expiry and no more', async () => {
    const justExpired = await signShellJwt(key, 'user-2', now() - 100);
    expect((await verifyShellJwt(key, justExpired)).ok).toBe(true);
    const longExpired = await signShellJwt(key, 'user-2', now() - 200);
    expect(await verifyShellJwt(key, longExpired)).toEqual({ ok: false, reason: 'expired' });
  });

  it('rejects a forged signature, another issuer, alg none and garbage', async () => {
    expect(await verifyShellJwt(key, await signShellJwt(otherKey, 'user-2'))).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
    const wrongIss = await new SignJWT({ gl_id: 'user-2' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('gitlab-workhorse')
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(key);
    expect(await verifyShellJwt(key, wrongIss)).toEqual({ ok: false, reason: 'wrong-issuer' });
    const none = new UnsecuredJWT({ gl_id: 'user-2' })
      .setIssuer('gitlab-shell')
      .setIssuedAt()
      .setExpirationTime('1m')
      .encode();
    expect((await verifyShellJwt(key, none)).ok).toBe(false);
    const hs512 = await new SignJWT({ gl_id: 'user-2' })
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuer('gitlab-shell')
      .setExpirationTime('1m')
      .sign(new Uint8Array(64));
    expect((await verifyShellJwt(key, hs512)).ok).toBe(false);
    expect(await verifyShellJwt(key, 'not.a.jwt')).toEqual({ ok: false, reason: 'malformed' });
    expect(await verifyShellJwt(key, undefined)).toEqual({ ok: false, reason: 'missing' });
  });
});

describe('workhorse JWT', () => {
  it('is accepted while iat is within 90 s', async () => {
    expect((await verifyWorkhorseJwt(key, await signWorkhorseJwt(key))).ok).toBe(true);
    expect(await verifyWorkhorseJwt(key, await signWorkhorseJwt(key, now() - 120))).toEqual({
      ok: false,
      reason: 'stale',
    });
  });

  it('is not interchangeable with a shell JWT', async () => {
    expect((await verifyWorkhorseJwt(key, await signShellJwt(key, 'user-1'))).ok).toBe(false);
    expect((await verifyShellJwt(key, await signWorkhorseJwt(key))).ok).toBe(false);
  });
});

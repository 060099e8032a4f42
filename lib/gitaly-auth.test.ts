import { describe, expect, it } from 'vitest';
import { checkGitalyAuth, gitalyAuthHeader } from './gitaly-auth.js';

describe('Gitaly v2 token', () => {
  const now = 1_700_000_000;

  it('signs hex HMAC-SHA256 of the timestamp (same as openssl dgst -sha256 -hmac)', () => {
    expect(gitalyAuthHeader('secret', now)).toBe(
      'Bearer v2.4b227f8831b3763d066901751ad4c583ed08832bf1924a4ec50c2e871b1e8586.1700000000',
    );
  });

  it('accepts ±30 s and rejects outside', () => {
    expect(checkGitalyAuth(gitalyAuthHeader('secret', now), 'secret', now + 30)).toBe('ok');
    expect(checkGitalyAuth(gitalyAuthHeader('secret', now), 'secret', now - 30)).toBe('ok');
    expect(checkGitalyAuth(gitalyAuthHeader('secret', now), 'secret', now + 31)).toBe('permission-denied');
  });

  it('answers unauthenticated for missing or unparsable values, permission denied for wrong ones', () => {
    expect(checkGitalyAuth(undefined, 'secret', now)).toBe('unauthenticated');
    expect(checkGitalyAuth('Bearer nope', 'secret', now)).toBe('unauthenticated');
    expect(checkGitalyAuth('Bearer v1.abcd.1700000000', 'secret', now)).toBe('unauthenticated');
    expect(checkGitalyAuth(gitalyAuthHeader('other', now), 'secret', now)).toBe('permission-denied');
  });
});

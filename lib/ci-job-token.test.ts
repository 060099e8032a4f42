import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CI_JOB_TOKEN_AUDIENCE,
  decodeCiJobToken,
  signCiJobToken,
  verifyCiJobTokenSignature,
} from './ci-job-token.js';
import { encodeRoutableToken, tokenRouting } from './routable-token.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
const claims = {
  sub: 'gid://gitlab/Ci::Build/77',
  iss: 'https://gitlab.example',
  iat: 1_700_000_000,
  exp: 1_700_003_900,
};

describe('glcbt- CI job tokens', () => {
  it('carry c/o/u/p/g as base36 strings (blanks dropped) in an RS256 JWT that a router decodes without the key', () => {
    const token = signCiJobToken(privateKey, 'kid-1', claims, { c: 2, o: 1000, u: 46656, p: 35, g: null });
    expect(token.startsWith('glcbt-')).toBe(true);
    const decoded = decodeCiJobToken(token);
    expect(decoded?.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    expect(decoded?.claims).toMatchObject({
      c: '2',
      o: 'rs',
      u: '1000',
      p: 'z',
      aud: CI_JOB_TOKEN_AUDIENCE,
      version: '0.1.0',
      ...claims,
    });
    expect(decoded?.claims).not.toHaveProperty('g');
    expect(decoded?.routing).toEqual({ c: '2', o: '1000', u: '46656', p: '35' });
    expect(decoded?.instancePrefix).toBe('');
    expect(verifyCiJobTokenSignature(token, publicKey)).toBe(true);
    expect(verifyCiJobTokenSignature(token, other)).toBe(false);
  });

  it('decodes behind an instance prefix and refuses what is not one', () => {
    const token = signCiJobToken(privateKey, 'k', claims, { c: 1 }, 'acme-');
    expect(decodeCiJobToken(token)?.instancePrefix).toBe('acme-');
    expect(decodeCiJobToken(token)?.routing).toEqual({ c: '1' });
    for (const bad of [
      'glpat-abc',
      'glcbt-a.b',
      'glcbt-e30.e30.x',
      `${'x'.repeat(30)}glcbt-${token.slice(11)}`,
    ])
      expect(decodeCiJobToken(bad), bad).toBeUndefined();
  });
});

describe('tokenRouting (lib/routable-token.ts)', () => {
  it('reads a glcbt- job token and a v01 routable token alike, and nothing else', () => {
    const job = signCiJobToken(privateKey, 'k', claims, { c: 2, o: 3, u: 5, p: 3 }, 'acme-');
    expect(tokenRouting(job)).toEqual({
      form: 'ci-job-token',
      prefix: 'acme-glcbt-',
      fields: { c: '2', o: '3', u: '5', p: '3' },
    });
    const pat = encodeRoutableToken('glpat-', { c: 2, o: 1, u: 1000 });
    expect(tokenRouting(pat)).toEqual({
      form: 'v01',
      prefix: 'glpat-',
      fields: { c: '2', o: '1', u: '1000' },
    });
    expect(tokenRouting('glpat-not-a-token')).toBeUndefined();
  });
});

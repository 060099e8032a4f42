import { describe, expect, it } from 'vitest';
import { decodeRoutableToken } from '../lib/routable-token.js';
import { isExpired, TokenStore } from './tokens.js';

describe('TokenStore', () => {
  it('mints routable PATs and finds them by the whole token only', () => {
    const store = new TokenStore();
    const { token, record } = store.mintPat(
      { name: 'n', userId: 1000, scopes: ['api'], expiresAt: null, cellId: 2 },
      1,
    );
    expect(decodeRoutableToken(token)).toMatchObject({
      prefix: 'glpat-',
      fields: { c: '2', o: '1', u: '1000' },
    });
    expect(store.lookup(token)).toEqual(record);
    expect(store.lookup(token.slice(0, -1))).toBeUndefined();
    const second = store.mintPat({ name: 'n', userId: 1, scopes: ['api'], expiresAt: null, cellId: 2 }, 1);
    expect(second.record.id).toBe(record.id + 1);
    expect(second.token).not.toBe(token);
  });

  it('puts the runner owner in g or p and the type in t', () => {
    const store = new TokenStore();
    const base = { organizationId: 3, creatorId: 5, description: '', cellId: 4 };
    const group = store.mintRunner({ ...base, runnerType: 'group_type', ownerId: 7 });
    expect(decodeRoutableToken(group.token)).toMatchObject({
      prefix: 'glrt-',
      fields: { c: '4', o: '3', g: '7', u: '5', t: '2' },
    });
    const project = store.mintRunner({ ...base, runnerType: 'project_type', ownerId: 9 });
    expect(decodeRoutableToken(project.token).fields).toEqual({ c: '4', o: '3', p: '9', u: '5', t: '3' });
    expect(store.lookup(project.token)).toMatchObject({ kind: 'runner', id: 2 });
  });

  it('expires a PAT on its expiry date', () => {
    const pat = { kind: 'pat', id: 1, name: 'n', userId: 1, scopes: [], createdAt: '', cellId: 1 } as const;
    const now = new Date('2025-06-01T12:00:00Z');
    expect(isExpired({ ...pat, scopes: [], expiresAt: null }, now)).toBe(false);
    expect(isExpired({ ...pat, scopes: [], expiresAt: '2025-06-02' }, now)).toBe(false);
    expect(isExpired({ ...pat, scopes: [], expiresAt: '2025-06-01' }, now)).toBe(true);
  });
});

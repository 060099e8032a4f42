import { describe, expect, it } from 'vitest';
import { SESSION_CAPACITY, SessionStore } from './sessions.js';

describe('SessionStore', () => {
  it('mints cell-prefixed ids and finds, forgets and bounds sessions', () => {
    const store = new SessionStore();
    const s = store.create(2, 3);
    expect(s.id).toMatch(/^cell-3-[0-9a-f]{32}$/);
    expect(store.get(s.id)).toEqual(s);
    expect(store.get(s.id.toUpperCase())).toBeUndefined();
    expect(store.delete(s.id)).toBe(true);
    expect(store.get(s.id)).toBeUndefined();

    const first = store.create(1, 1);
    for (let i = 0; i < SESSION_CAPACITY; i++) store.create(1, 1);
    expect(store.get(first.id)).toBeUndefined();
  });
});

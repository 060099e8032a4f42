import { describe, expect, it } from 'vitest';
import type { Metadata__Output } from '../lib/generated/gitlab/cells/topology_service/claims/v1/Metadata.js';
import { claimRecord } from './client.js';
import { ClaimStore, type ClaimStore as Store } from './store.js';

/** Records as a hand-built client sends them, decoded as proto-loader would (Output shape). */
const route = (value: string) => claimRecord({ route: value }) as Metadata__Output;
const key = (value: string) => ({ field: 'route' as const, value });

function clocked(opts: Partial<ConstructorParameters<typeof ClaimStore>[0]> = {}) {
  let now = 1_000_000;
  const store = new ClaimStore({ conflict: 'move', now: () => new Date(now), ...opts });
  return { store, tick: (ms: number) => (now += ms) };
}

function claim(store: Store, cellId: number, ...routes: string[]) {
  return store.commit(cellId, store.begin(cellId, routes.map(route), []).uuid);
}

describe('ClaimStore', () => {
  it('a re-claim by the same cell keeps the record’s uuid and creation time', () => {
    const { store, tick } = clocked();
    claim(store, 2, 'acme');
    const first = store.lookup(key('acme'));
    tick(5_000);
    expect(claim(store, 2, 'acme')).toEqual({ created: 1, destroyed: 0, moved: [] });
    const again = store.lookup(key('acme'));
    expect(again?.uuid).toBe(first?.uuid);
    expect(again?.createdAt).toEqual(first?.createdAt);
    expect(again?.updatedAt.getTime()).toBe((first?.updatedAt.getTime() ?? 0) + 5_000);
  });

  it('move: the key goes to the committing cell, reported as moved', () => {
    const { store } = clocked();
    claim(store, 2, 'acme');
    expect(claim(store, 3, 'acme').moved).toEqual([{ key: key('acme'), from: 2 }]);
    expect(store.lookup(key('acme'))?.cellId).toBe(3);
    expect(store.recordsOf(2)).toEqual([]);
  });

  it('a destroy only removes the cell’s own records', () => {
    const { store } = clocked();
    claim(store, 2, 'acme');
    const lease = store.begin(3, [], [route('acme')]);
    expect(store.commit(3, lease.uuid).destroyed).toBe(0);
    expect(store.lookup(key('acme'))?.cellId).toBe(2);
  });

  it('reject: a key another cell holds, or is claiming in an open lease, is refused', () => {
    const { store } = clocked({ conflict: 'reject' });
    claim(store, 2, 'held');
    expect(() => store.begin(3, [route('held')], [])).toThrow('route "held" is claimed by cell 2');
    const open = store.begin(2, [route('acme')], []);
    expect(() => store.begin(3, [route('acme')], [])).toThrow('route "acme" is being claimed by cell 2');
    store.commit(2, open.uuid);
    expect(store.lookup(key('acme'))?.cellId).toBe(2);
    expect(store.leases(3)).toEqual([]);
  });

  it('the same key twice in one update is refused', () => {
    const { store } = clocked();
    expect(() => store.begin(2, [route('a'), route('A')], [])).toThrow(
      'route "a" is created twice in one update',
    );
  });

  it('open leases expire, and a cell has a bounded number of them', () => {
    const { store, tick } = clocked({ leaseTtlMs: 1_000, maxLeasesPerCell: 2 });
    const old = store.begin(2, [route('a')], []);
    store.begin(2, [route('b')], []);
    expect(() => store.begin(2, [route('c')], [])).toThrow(/cell 2 has 2 open leases/);
    tick(1_001);
    expect(store.leases(2)).toEqual([]);
    expect(() => store.commit(2, old.uuid)).toThrow(`cell 2 has no open lease ${old.uuid}`);
    store.begin(2, [route('c')], []);
  });

  it('a lease belongs to its cell', () => {
    const { store } = clocked();
    const lease = store.begin(2, [route('a')], []);
    expect(() => store.commit(3, lease.uuid)).toThrow(/cell 3 has no open lease/);
    expect(() => store.rollback(3, lease.uuid)).toThrow(/cell 3 has no open lease/);
    store.rollback(2, lease.uuid);
    expect(store.leases(2)).toEqual([]);
  });
});

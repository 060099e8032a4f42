import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config.js';
import {
  type ConcurrencyLimit,
  ConcurrencyLimiter,
  concurrencyValidator,
  MAX_QUEUE_SIZE_MESSAGE,
  MAX_QUEUE_TIME_MESSAGE,
} from './concurrency.js';
import { RpcError } from './errors.js';

const RPC = '/gitaly.SSHService/SSHUploadPackWithSidechannel';
const limit = (over: Partial<ConcurrencyLimit> = {}): ConcurrencyLimit => ({
  rpc: RPC,
  maxPerRepo: 1,
  maxQueueSize: 10,
  maxQueueWaitMs: 0,
  ...over,
});
const settled = async <T>(p: Promise<T>) => {
  let state = 'pending';
  p.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  await new Promise((r) => setImmediate(r));
  return state;
};

describe('ConcurrencyLimiter', () => {
  it('without an entry nothing is limited (Gitaly: off by default)', async () => {
    const limiter = new ConcurrencyLimiter([]);
    expect(limiter.isLimited(RPC)).toBe(false);
    const calls = await Promise.all([1, 2, 3].map(() => limiter.acquire(RPC, 'default/a.git')));
    expect(calls).toHaveLength(3);
  });

  it('maxPerRepo 1: the second call of one repository waits until the first ends; another repository does not', async () => {
    const limiter = new ConcurrencyLimiter([limit()]);
    const first = await limiter.acquire(RPC, 'default/a.git');
    const second = limiter.acquire(RPC, 'default/a.git');
    expect(await settled(second)).toBe('pending');
    expect(await settled(limiter.acquire(RPC, 'default/b.git'))).toBe('resolved');
    expect(await settled(limiter.acquire('/gitaly.SSHService/SSHReceivePack', 'default/a.git'))).toBe(
      'resolved',
    );
    first();
    first();
    expect(await settled(second)).toBe('resolved');
    expect(limiter.running(RPC, 'default/a.git')).toBe(1);
    (await second)();
    expect(limiter.running(RPC, 'default/a.git')).toBe(0);
  });

  it('setLimits: waiters are admitted as far as the new limits allow, running calls keep their slots', async () => {
    const limiter = new ConcurrencyLimiter([limit()]);
    const first = await limiter.acquire(RPC, 'default/a.git');
    const waiting = [1, 2, 3].map(() => limiter.acquire(RPC, 'default/a.git'));
    limiter.setLimits([limit({ maxPerRepo: 3 })]);
    expect(await Promise.all(waiting.map(settled))).toEqual(['resolved', 'resolved', 'pending']);
    expect(limiter.running(RPC, 'default/a.git')).toBe(3);
    // Tightened below what runs: nobody is stopped, the next call waits until enough ended.
    limiter.setLimits([limit({ maxPerRepo: 1 })]);
    first();
    expect(await settled(waiting[2] as Promise<unknown>)).toBe('pending');
    (await waiting[0])?.();
    (await waiting[1])?.();
    expect(await settled(waiting[2] as Promise<unknown>)).toBe('resolved');
    // Lifted: the RPC is not limited any more, whatever waited runs.
    const next = [1, 2].map(() => limiter.acquire(RPC, 'default/a.git'));
    expect(await settled(next[0] as Promise<unknown>)).toBe('pending');
    limiter.setLimits([]);
    expect(limiter.isLimited(RPC)).toBe(false);
    expect(await Promise.all(next.map(settled))).toEqual(['resolved', 'resolved']);
  });

  it('over maxPerRepo + maxQueueSize: RESOURCE_EXHAUSTED "maximum queue size reached" at once', async () => {
    const limiter = new ConcurrencyLimiter([limit({ maxPerRepo: 1, maxQueueSize: 1 })]);
    await limiter.acquire(RPC, 'default/a.git');
    const queued = limiter.acquire(RPC, 'default/a.git');
    const err = await limiter.acquire(RPC, 'default/a.git').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ grpcCode: status.RESOURCE_EXHAUSTED, message: MAX_QUEUE_SIZE_MESSAGE });
    expect(await settled(queued)).toBe('pending');
  });

  it('waiting longer than maxQueueWaitMs: "maximum time in concurrency queue reached", and the queue frees its place', async () => {
    const limiter = new ConcurrencyLimiter([limit({ maxQueueSize: 1, maxQueueWaitMs: 50 })]);
    const first = await limiter.acquire(RPC, 'default/a.git');
    const err = await limiter.acquire(RPC, 'default/a.git').catch((e: unknown) => e);
    expect(err).toMatchObject({ grpcCode: status.RESOURCE_EXHAUSTED, message: MAX_QUEUE_TIME_MESSAGE });
    const next = limiter.acquire(RPC, 'default/a.git');
    first();
    expect(await settled(next)).toBe('resolved');
  });

  it('a call cancelled while it waits leaves the queue with CANCELLED', async () => {
    const limiter = new ConcurrencyLimiter([limit({ maxQueueSize: 1 })]);
    const first = await limiter.acquire(RPC, 'default/a.git');
    let cancel: () => void = () => undefined;
    const waiting = limiter.acquire(RPC, 'default/a.git', (exit) => {
      cancel = exit.cancel;
    });
    cancel();
    expect(await waiting.catch((e: unknown) => e)).toMatchObject({ grpcCode: status.CANCELLED });
    expect(await settled(limiter.acquire(RPC, 'default/a.git'))).toBe('pending');
    first();
  });
});

describe('concurrencyValidator', () => {
  it("takes Gitaly's RPC names and minimums; maxQueueWaitMs defaults to 0", () => {
    expect(concurrencyValidator([{ rpc: RPC, maxPerRepo: 2, maxQueueSize: 5 }], 'concurrency')).toEqual([
      { rpc: RPC, maxPerRepo: 2, maxQueueSize: 5, maxQueueWaitMs: 0 },
    ]);
    expect(concurrencyValidator(JSON.stringify([limit()]), 'concurrency')).toEqual([limit()]);
  });

  it.each([
    [[{ rpc: 'SSHUploadPack', maxPerRepo: 1, maxQueueSize: 1 }], /concurrency\[0\]\.rpc must be one of/],
    [[{ rpc: RPC, maxPerRepo: 1, maxQueueSize: 0 }], /maxQueueSize must be an integer ≥ 1/],
    [[{ rpc: RPC, maxPerRepo: -1, maxQueueSize: 1 }], /maxPerRepo must be an integer ≥ 0/],
    [[{ rpc: RPC, maxPerRepo: 1, maxQueueSize: 1, wait: 1 }], /unknown field wait/],
    [
      [limit(), limit()],
      /concurrency\[1\]\.rpc: \/gitaly\.SSHService\/SSHUploadPackWithSidechannel already has a limit/,
    ],
    [{}, /must be a list/],
  ])('refuses %j', (value, message) => {
    expect(() => concurrencyValidator(value, 'concurrency')).toThrow(ConfigError);
    expect(() => concurrencyValidator(value, 'concurrency')).toThrow(message);
  });
});

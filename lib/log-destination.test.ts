import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FdDestination, type FdWrite } from './log-destination.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

/** A descriptor double: takes at most `room` bytes per call (EAGAIN when 0), or fails with `failure`. */
class FakeFd {
  readonly taken: string[] = [];
  calls = 0;
  room = Number.POSITIVE_INFINITY;
  failure: string | undefined;
  readonly write: FdWrite = (_fd, data) => {
    this.calls++;
    if (this.failure) throw errno(this.failure);
    if (this.room <= 0) throw errno('EAGAIN');
    const n = Math.min(this.room, data.length);
    this.taken.push(Buffer.from(data.subarray(0, n)).toString());
    return n;
  };
  get text(): string {
    return this.taken.join('');
  }
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('FdDestination', () => {
  it('writes every line before write() returns, in order', () => {
    const fd = new FakeFd();
    const dest = new FdDestination(1, { write: fd.write });
    dest.write('one\n');
    expect(fd.text).toBe('one\n');
    dest.write('two\n');
    expect(fd.text).toBe('one\ntwo\n');
  });

  it('finishes a partially written line before the next one', () => {
    const fd = new FakeFd();
    fd.room = 3;
    const dest = new FdDestination(1, { write: fd.write });
    dest.write('abcdefgh\n');
    dest.write('next\n');
    expect(fd.text).toBe('abcdefgh\nnext\n');
    expect(fd.taken[0]).toBe('abc');
  });

  it('stops logging for good after EPIPE: reports it once, never throws, never writes again', () => {
    const fd = new FakeFd();
    const closes: string[] = [];
    const dest = new FdDestination(1, { write: fd.write, onClose: (code) => closes.push(code) });
    dest.write('before\n');
    fd.failure = 'EPIPE';
    expect(() => dest.write('lost\n')).not.toThrow();
    const callsAfterFailure = fd.calls;
    for (let i = 0; i < 5; i++) dest.write('also lost\n');
    dest.flush();
    vi.advanceTimersByTime(10_000);
    expect(fd.calls).toBe(callsAfterFailure);
    expect(closes).toEqual(['EPIPE']);
    expect(fd.text).toBe('before\n');
  });

  it('ends logging on EBADF (descriptor closed) as on EPIPE', () => {
    const fd = new FakeFd();
    fd.failure = 'EBADF';
    const closes: string[] = [];
    const dest = new FdDestination(1, { write: fd.write, onClose: (code) => closes.push(code) });
    expect(() => dest.write('x\n')).not.toThrow();
    dest.write('y\n');
    expect(closes).toEqual(['EBADF']);
    expect(fd.calls).toBe(1);
  });

  it('keeps what a full non-blocking descriptor refused and writes it later, without waiting', () => {
    const fd = new FakeFd();
    fd.room = 0;
    const dest = new FdDestination(1, { write: fd.write, retryMs: 50 });
    dest.write('first\n');
    dest.write('second\n');
    expect(fd.text).toBe('');
    vi.advanceTimersByTime(50);
    expect(fd.text).toBe('');
    fd.room = Number.POSITIVE_INFINITY;
    vi.advanceTimersByTime(50);
    expect(fd.text).toBe('first\nsecond\n');
  });

  it('drops whole lines beyond maxPendingBytes while the descriptor is full', () => {
    const fd = new FakeFd();
    fd.room = 0;
    const dest = new FdDestination(1, { write: fd.write, retryMs: 10, maxPendingBytes: 12 });
    dest.write('aaaa\n');
    dest.write('bbbb\n');
    dest.write('cccc\n');
    fd.room = Number.POSITIVE_INFINITY;
    vi.advanceTimersByTime(10);
    expect(fd.text).toBe('aaaa\nbbbb\n');
  });

  it('flushes pending lines once at exit, and only holds an exit listener while something is pending', () => {
    const fd = new FakeFd();
    const before = process.listenerCount('exit');
    fd.room = 0;
    const dest = new FdDestination(1, { write: fd.write });
    dest.write('late\n');
    expect(process.listenerCount('exit')).toBe(before + 1);
    fd.room = Number.POSITIVE_INFINITY;
    const onExit = process.listeners('exit').at(-1) as (code: number) => void;
    onExit(0);
    expect(fd.text).toBe('late\n');
    expect(process.listenerCount('exit')).toBe(before);
  });
});

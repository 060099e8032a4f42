import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { NegotiationMonitor } from './negotiation.js';

afterEach(() => {
  vi.useRealTimers();
});

function monitor(until: 'done' | 'flush') {
  vi.useFakeTimers();
  const onTimeout = vi.fn();
  return { m: new NegotiationMonitor(until, 1000, onTimeout), onTimeout };
}

describe('NegotiationMonitor', () => {
  it('times out without the done packet', () => {
    const { m, onTimeout } = monitor('done');
    m.feed(Buffer.concat([encodePkt('want abc\n'), FLUSH_PKT]));
    vi.advanceTimersByTime(999);
    expect(onTimeout).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onTimeout).toHaveBeenCalledOnce();
    expect(m.active).toBe(false);
  });

  it('stops at done, even when the packet arrives split across chunks', () => {
    const { m, onTimeout } = monitor('done');
    const bytes = Buffer.concat([encodePkt('have abc\n'), encodePkt('done\n')]);
    m.feed(bytes.subarray(0, 15));
    expect(m.active).toBe(true);
    m.feed(bytes.subarray(15));
    expect(m.active).toBe(false);
    vi.advanceTimersByTime(5000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('does not take a flush for done, nor a "done" inside another line', () => {
    const { m } = monitor('done');
    m.feed(Buffer.concat([FLUSH_PKT, encodePkt('done-ish\n'), encodePkt('want done\n')]));
    expect(m.active).toBe(true);
  });

  it('stops at the first flush for upload-archive', () => {
    const { m } = monitor('flush');
    m.feed(encodePkt('argument HEAD\n'));
    expect(m.active).toBe(true);
    m.feed(FLUSH_PKT);
    expect(m.active).toBe(false);
  });

  it('gives up on bytes that are not pkt-lines and on stop()', () => {
    const { m, onTimeout } = monitor('done');
    m.feed(Buffer.from('zzzz not a pkt-line'));
    expect(m.active).toBe(false);
    const other = monitor('done');
    other.m.stop();
    vi.advanceTimersByTime(5000);
    expect(onTimeout).not.toHaveBeenCalled();
    expect(other.onTimeout).not.toHaveBeenCalled();
  });
});

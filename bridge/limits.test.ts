import { describe, expect, it } from 'vitest';
import { TunnelLimiter } from './limits.js';

describe('TunnelLimiter', () => {
  it('limits per user and per bridge, and releases once', () => {
    const l = new TunnelLimiter(3, 2);
    const a1 = l.acquire('user-1');
    const a2 = l.acquire('user-1');
    const a3 = l.acquire('user-1');
    expect(a1.ok && a2.ok).toBe(true);
    expect(a3.ok ? undefined : a3.error.statusCode).toBe(429);
    const b1 = l.acquire('user-2');
    const b2 = l.acquire('user-2');
    expect(b1.ok).toBe(true);
    expect(b2.ok ? undefined : b2.error.code).toBe('BRIDGE_TOO_MANY_TUNNELS');
    if (a1.ok) {
      a1.release();
      a1.release();
    }
    expect(l.active).toBe(2);
    expect(l.activeFor('user-1')).toBe(1);
    expect(l.acquire('user-2').ok).toBe(true);
  });

  it('treats 0 as unlimited', () => {
    const l = new TunnelLimiter(0, 0);
    for (let i = 0; i < 100; i++) expect(l.acquire('u').ok).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config.js';
import { maxStartupsValidator, StartupGate } from './startups.js';

describe('maxStartups setting', () => {
  it('reads start:rate:full and a lone start as OpenSSH does', () => {
    expect(maxStartupsValidator('10:30:100', 'm')).toEqual({ start: 10, rate: 30, full: 100 });
    expect(maxStartupsValidator('5', 'm')).toEqual({ start: 5, rate: 100, full: 5 });
    expect(maxStartupsValidator(undefined, 'm')).toBeUndefined();
    expect(maxStartupsValidator('off', 'm')).toBeUndefined();
  });

  it.each(['10:30', '0:30:100', '10:130:100', '10:30:5', 'a:b:c', '1.5'])('refuses %j', (v) => {
    expect(() => maxStartupsValidator(v, 'maxStartups')).toThrow(ConfigError);
  });
});

describe('StartupGate', () => {
  it('admits below start, drops with a rising probability, and always at full', () => {
    let roll = 0;
    const gate = new StartupGate({ start: 2, rate: 50, full: 4 }, undefined, () => roll);
    const held = [gate.admit('a'), gate.admit('b')];
    expect(held.every((v) => v.admitted)).toBe(true);
    // 2 pending: p = 50%; a roll of 0.6 passes, 0.4 is dropped.
    roll = 0.4;
    expect(gate.admit('c').admitted).toBe(false);
    roll = 0.6;
    expect(gate.admit('c').admitted).toBe(true);
    // 3 pending: p = 75%.
    roll = 0.7;
    expect(gate.admit('d').admitted).toBe(false);
    roll = 0.8;
    expect(gate.admit('d').admitted).toBe(true);
    roll = 0.99;
    expect(gate.admit('e')).toEqual({ admitted: false, reason: 'startups limit' });
    expect(gate.unauthenticated).toBe(4);
  });

  it('releases once per connection and caps per source', () => {
    const gate = new StartupGate(undefined, 2);
    const a = gate.admit('10.0.0.1');
    const b = gate.admit('10.0.0.1');
    expect(gate.admit('10.0.0.1')).toEqual({ admitted: false, reason: 'per-source startups limit' });
    expect(gate.admit('10.0.0.2').admitted).toBe(true);
    if (!a.admitted || !b.admitted) throw new Error('expected admissions');
    a.release();
    a.release();
    expect(gate.unauthenticated).toBe(2);
    expect(gate.admit('10.0.0.1').admitted).toBe(true);
  });
});

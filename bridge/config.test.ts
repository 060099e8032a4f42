import { describe, expect, it } from 'vitest';
import { loadBridgeConfig } from './config.js';

const base = {
  listen: '127.0.0.1:4001',
  railsUrl: 'http://127.0.0.1:3001/',
  shellSecretFile: '/s',
  workhorseSecretFile: '/w',
};

describe('loadBridgeConfig', () => {
  it('applies defaults and freezes', () => {
    const c = loadBridgeConfig(base, {});
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 4001 });
    expect(c.railsUrl).toBe('http://127.0.0.1:3001');
    expect(c.metricsListen).toBeUndefined();
    expect(c.responseKeepaliveMs).toBe(5000);
    expect(c.gitalyKeepaliveMs).toBeGreaterThanOrEqual(20_000);
    // No per-user cap unless asked for: GitLab has none.
    expect(c.maxTunnelsPerUser).toBe(0);
    expect(loadBridgeConfig(base, { BRIDGE_MAX_TUNNELS_PER_USER: '50' }).maxTunnelsPerUser).toBe(50);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads BRIDGE_* environment overrides', () => {
    const c = loadBridgeConfig(base, { BRIDGE_METRICS_LISTEN: '127.0.0.1:4101', BRIDGE_MAX_TUNNELS: '5' });
    expect(c.metricsListen).toEqual({ host: '127.0.0.1', port: 4101 });
    expect(c.maxTunnels).toBe(5);
  });

  it.each([
    [{ ...base, listen: 'nope' }, /listen/],
    [{ ...base, railsUrl: 'ftp://x' }, /railsUrl/],
    [{ ...base, gitalyKeepaliveMs: 5000 }, /gitalyKeepaliveMs/],
    [{ ...base, tlsCertFile: '/c' }, /tlsCertFile and tlsKeyFile/],
    [{ ...base, h2StreamWindowBytes: 1 << 24, h2ConnectionWindowBytes: 1 << 20 }, /h2ConnectionWindowBytes/],
    [{ ...base, bogus: 1 }, /unknown setting "bogus"/],
    [{ listen: '127.0.0.1:1' }, /missing required setting railsUrl/],
  ])('refuses %j', (file, message) => {
    expect(() => loadBridgeConfig(file, {})).toThrow(message);
  });
});

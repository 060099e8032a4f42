import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, hostPort, httpUrl, int, loadConfig, readConfigFile, str } from './config.js';
import { readSecretFile } from './secrets.js';

const dir = mkdtempSync(join(tmpdir(), 'config-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const schema = {
  listen: { validate: hostPort, default: '127.0.0.1:1' },
  railsUrl: { validate: httpUrl },
  maxTunnels: { validate: int(1, 10), default: 5 },
  name: { validate: str, default: 'x' },
};

describe('loadConfig', () => {
  it('applies defaults, then the file, then env, and freezes the result', () => {
    const cfg = loadConfig(schema, {
      prefix: 'BRIDGE',
      file: { railsUrl: 'http://127.0.0.1:3001/', maxTunnels: 3 },
      env: { BRIDGE_MAX_TUNNELS: '7' },
    });
    expect(cfg).toEqual({
      listen: { host: '127.0.0.1', port: 1 },
      railsUrl: 'http://127.0.0.1:3001',
      maxTunnels: 7,
      name: 'x',
    });
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(Object.isFrozen(cfg.listen)).toBe(true);
  });

  it('names the setting and its env variable in errors', () => {
    expect(() => loadConfig(schema, { prefix: 'BRIDGE', env: {} })).toThrow(/railsUrl.*BRIDGE_RAILS_URL/);
    expect(() => loadConfig(schema, { prefix: 'BRIDGE', env: { BRIDGE_RAILS_URL: 'ftp://x' } })).toThrow(
      /http\(s\) URL/,
    );
    expect(() =>
      loadConfig(schema, {
        prefix: 'BRIDGE',
        env: { BRIDGE_RAILS_URL: 'http://x', BRIDGE_MAX_TUNNELS: '11' },
      }),
    ).toThrow(/maxTunnels.*between 1 and 10/);
    expect(() =>
      loadConfig(schema, { prefix: 'BRIDGE', env: {}, file: { railsUrl: 'http://x', typo: 1 } }),
    ).toThrow(/unknown setting "typo"/);
  });

  it('parses host:port including IPv6', () => {
    expect(hostPort('[::1]:2222', 'x')).toEqual({ host: '::1', port: 2222 });
    expect(() => hostPort('localhost', 'x')).toThrow(ConfigError);
  });

  it('reads --config JSON files with clear errors', () => {
    const good = join(dir, 'good.json');
    writeFileSync(good, '{"railsUrl":"http://a"}');
    expect(readConfigFile(['node', 'main.js', '--config', good])).toEqual({ railsUrl: 'http://a' });
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '[1]');
    expect(() => readConfigFile(['--config', bad])).toThrow(/not a JSON object/);
    expect(() => readConfigFile(['--config', join(dir, 'missing.json')])).toThrow(/cannot read config file/);
  });
});

describe('readSecretFile', () => {
  it('trims and returns an owner-only secret', () => {
    const f = join(dir, 'secret');
    writeFileSync(f, ' abc \n', { mode: 0o600 });
    expect(readSecretFile(f)).toBe('abc');
  });

  it('refuses group- or world-readable files and empty ones', () => {
    const loose = join(dir, 'loose');
    writeFileSync(loose, 'abc', { mode: 0o644 });
    expect(() => readSecretFile(loose)).toThrow(/chmod 600/);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n', { mode: 0o600 });
    expect(() => readSecretFile(empty)).toThrow(/empty/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config.js';
import { loadRouterConfig } from './config.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-config-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const cells = [
  { id: 1, name: 'cell_us0', legacy: true, region: 'us', url: 'http://127.0.0.1:4001' },
  { id: 3, name: 'cell_eu0', region: 'eu', url: 'https://cell-eu0.example.com/prefix/' },
];

function load(file: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const path = join(dir, 'router.json');
  writeFileSync(path, JSON.stringify(file));
  return loadRouterConfig(['node', 'main.js', '--config', path], env);
}

const minimal = { hostKeyFile: '/k', shellSecretFile: '/s', region: 'eu', cells };

describe('router config', () => {
  it('applies defaults and normalizes cells', () => {
    const config = load(minimal);
    expect(config.sshListen).toEqual({ host: '127.0.0.1', port: 2222 });
    expect(config.httpListen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(config.metricsListen).toBeUndefined();
    expect(config.learnCacheMaxEntries).toBe(10_000);
    expect(config.shutdownGraceMs).toBe(10_000);
    expect(config.cells[1]).toEqual({
      id: 3,
      name: 'cell_eu0',
      legacy: false,
      region: 'eu',
      url: 'https://cell-eu0.example.com/prefix',
    });
    expect(config.cellProtocol).toBe('http1');
    expect(Object.isFrozen(config.cells[0])).toBe(true);
  });

  it('reads a cell protocol: http1 or h2c, else the router-wide cellProtocol (http1, as gitlab-shell)', () => {
    const config = load({ ...minimal, cells: [{ ...cells[0], protocol: 'h2c' }, cells[1]] });
    expect(config.cells.map((c) => c.protocol)).toEqual(['h2c', undefined]);
    expect(load(minimal, { ROUTER_CELL_PROTOCOL: 'h2c' }).cellProtocol).toBe('h2c');
    expect(() => load(minimal, { ROUTER_CELL_PROTOCOL: 'h3' })).toThrow(
      'cellProtocol (ROUTER_CELL_PROTOCOL) must be one of http1, h2c',
    );
  });

  it('takes ROUTER_* environment overrides, cells as JSON', () => {
    const config = load(minimal, {
      ROUTER_SSH_LISTEN: '0.0.0.0:2022',
      ROUTER_LEARN_CACHE_MAX_ENTRIES: '5',
      ROUTER_CELLS: JSON.stringify([{ ...cells[0], region: 'eu' }]),
      ROUTER_METRICS_LISTEN: '127.0.0.1:8081',
    });
    expect(config.sshListen).toEqual({ host: '0.0.0.0', port: 2022 });
    expect(config.learnCacheMaxEntries).toBe(5);
    expect(config.cells).toHaveLength(1);
    expect(config.metricsListen).toEqual({ host: '127.0.0.1', port: 8081 });
  });

  it('reads rulesFile and notFoundDelayMs (off by default)', () => {
    expect(load(minimal)).toMatchObject({ rulesFile: undefined, notFoundDelayMs: undefined });
    expect(load({ ...minimal, rulesFile: '/etc/rules.json', notFoundDelayMs: [50, 250] })).toMatchObject({
      rulesFile: '/etc/rules.json',
      notFoundDelayMs: [50, 250],
    });
    expect(load(minimal, { ROUTER_NOT_FOUND_DELAY_MS: '10, 20' }).notFoundDelayMs).toEqual([10, 20]);
    expect(load(minimal, { ROUTER_NOT_FOUND_DELAY_MS: '[0,0]' }).notFoundDelayMs).toEqual([0, 0]);
    expect(
      load({ ...minimal, notFoundDelayMs: [5, 9] }, { ROUTER_NOT_FOUND_DELAY_MS: 'off' }).notFoundDelayMs,
    ).toBe(undefined);
  });

  it.each([
    [
      { ...minimal, notFoundDelayMs: [300, 100] },
      'notFoundDelayMs (ROUTER_NOT_FOUND_DELAY_MS) must be [min, max] milliseconds with 0 <= min <= max <= 60000, got min 300 > max 100',
    ],
    [{ ...minimal, notFoundDelayMs: 100 }, 'must be [min, max] milliseconds'],
    [{ ...minimal, notFoundDelayMs: [1, 2, 3] }, 'must be [min, max] milliseconds'],
    [
      { ...minimal, notFoundDelayMs: [-1, 5] },
      'notFoundDelayMs (ROUTER_NOT_FOUND_DELAY_MS)[0] must be an integer between 0 and 60000',
    ],
    [{ ...minimal, notFoundDelayMs: [1, 60_001] }, '[1] must be an integer between 0 and 60000'],
    [{ ...minimal, rulesFile: 42 }, 'rulesFile (ROUTER_RULES_FILE) must be a non-empty string'],
    [{ ...minimal, cells: [{ ...cells[0], legacy: false }, cells[1]] }, 'exactly one legacy cell, found 0'],
    [{ ...minimal, cells: [cells[0], { ...cells[1], legacy: true }] }, 'exactly one legacy cell, found 2'],
    [{ ...minimal, cells: [cells[0], { ...cells[1], name: 'cell_us0' }] }, 'cell name "cell_us0" twice'],
    [{ ...minimal, cells: [cells[0], { ...cells[1], url: 'ftp://x' }] }, 'cells (ROUTER_CELLS)[1].url'],
    [{ ...minimal, cells: [cells[0], { ...cells[1], zone: 'x' }] }, 'unknown key "zone"'],
    [
      { ...minimal, cells: [cells[0], { ...cells[1], protocol: 'h2' }] },
      '(ROUTER_CELLS)[1].protocol must be one of http1, h2c',
    ],
    [{ ...minimal, cells: [] }, 'non-empty array of cells'],
    [{ ...minimal, region: 'ap' }, 'region (ROUTER_REGION) "ap" has no cell'],
    [{ ...minimal, sshListen: 'nope' }, 'sshListen (ROUTER_SSH_LISTEN) must look like host:port'],
    [{ ...minimal, learnCacheMaxEntries: 0 }, 'learnCacheMaxEntries'],
    [{ ...minimal, sshPort: 22 }, 'unknown setting "sshPort"'],
    [{ hostKeyFile: '/k', shellSecretFile: '/s', cells }, 'missing required setting region'],
  ])('rejects %j with a message naming the setting', (file, message) => {
    expect(() => load(file)).toThrow(ConfigError);
    expect(() => load(file)).toThrow(message);
  });
});

describe('routing setting', () => {
  it('defaults to learn; topology needs the service address and the cell endpoint port', () => {
    expect(load(minimal).routing).toBe('learn');
    expect(() => load({ ...minimal, routing: 'topology' })).toThrow(/topologyServiceAddress/);
    expect(() => load({ ...minimal, routing: 'topology', topologyServiceAddress: '127.0.0.1:9095' })).toThrow(
      /cellEndpointPort/,
    );
    expect(() => load({ ...minimal, routing: 'other' })).toThrow(ConfigError);
    const config = load(minimal, {
      ROUTER_ROUTING: 'topology',
      ROUTER_TOPOLOGY_SERVICE_ADDRESS: '127.0.0.1:9095',
      ROUTER_TOPOLOGY_SERVICE_URL: 'http://127.0.0.1:9096',
      ROUTER_CELL_ENDPOINT_PORT: '3443',
    });
    expect(config).toMatchObject({
      routing: 'topology',
      topologyServiceAddress: '127.0.0.1:9095',
      topologyServiceUrl: 'http://127.0.0.1:9096',
      cellEndpointScheme: 'http',
      cellEndpointPort: 3443,
      topologyTimeoutMs: 5000,
    });
  });
});

describe('tunnelProfile setting', () => {
  it('defaults to the newest gitlab-shell shape and takes every profile of the table', () => {
    expect(load(minimal).tunnelProfile).toBe('gitlab-shell-14.57.6');
    expect(load(minimal, { ROUTER_TUNNEL_PROFILE: 'gitlab-shell-14.56' }).tunnelProfile).toBe(
      'gitlab-shell-14.56',
    );
    expect(load({ ...minimal, tunnelProfile: 'gitlab-shell-14.57.3' }).tunnelProfile).toBe(
      'gitlab-shell-14.57.3',
    );
  });

  it('rejects an unknown profile naming the ones that exist', () => {
    expect(() => load(minimal, { ROUTER_TUNNEL_PROFILE: 'gitlab-shell-15' })).toThrow(
      'tunnelProfile (ROUTER_TUNNEL_PROFILE) must be one of gitlab-shell-14.56, gitlab-shell-14.57.2, gitlab-shell-14.57.3, gitlab-shell-14.57.4, gitlab-shell-14.57.6, got "gitlab-shell-15"',
    );
  });
});

describe('shellJwtTtlSeconds setting', () => {
  it("defaults to gitlab-shell's 60 s and takes a shorter one from the file or the environment", () => {
    expect(load(minimal).shellJwtTtlSeconds).toBe(60);
    expect(load(minimal, { ROUTER_SHELL_JWT_TTL_SECONDS: '5' }).shellJwtTtlSeconds).toBe(5);
    expect(load({ ...minimal, shellJwtTtlSeconds: 2 }).shellJwtTtlSeconds).toBe(2);
  });

  it('rejects 0, fractions and more than an hour', () => {
    for (const bad of ['0', '1.5', '3601', 'soon'])
      expect(() => load(minimal, { ROUTER_SHELL_JWT_TTL_SECONDS: bad })).toThrow(
        /shellJwtTtlSeconds \(ROUTER_SHELL_JWT_TTL_SECONDS\)/,
      );
  });
});

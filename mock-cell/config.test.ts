import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config.js';
import { loadMockCellConfig } from './config.js';

const FILE = {
  topologyFile: '/data/topology.json',
  listen: [
    { cell: 'cell_us0', address: '127.0.0.1:3001' },
    { cell: 'cell_eu0', address: '[::1]:3003' },
  ],
  shellSecretFile: '/data/secrets/shell',
  workhorseSecretFile: '/data/secrets/workhorse',
  gitalyTokenFile: '/data/secrets/gitaly',
};

describe('mock-cell config', () => {
  it('reads the file, parses listen addresses and defaults the log level', () => {
    const config = loadMockCellConfig(FILE, {});
    expect(config.listen).toEqual([
      { cell: 'cell_us0', host: '127.0.0.1', port: 3001 },
      { cell: 'cell_eu0', host: '::1', port: 3003 },
    ]);
    expect(config.logLevel).toBe('info');
    expect(Object.isFrozen(config.listen[0])).toBe(true);
  });

  it('takes MOCK_CELL_* environment overrides, listen as JSON', () => {
    const config = loadMockCellConfig(FILE, {
      MOCK_CELL_LISTEN: '[{"cell":"cell_us1","address":"0.0.0.0:0"}]',
      MOCK_CELL_LOG_LEVEL: 'debug',
      MOCK_CELL_TOPOLOGY_FILE: '/other/topology.json',
    });
    expect(config.listen).toEqual([{ cell: 'cell_us1', host: '0.0.0.0', port: 0 }]);
    expect(config.logLevel).toBe('debug');
    expect(config.topologyFile).toBe('/other/topology.json');
  });

  it.each([
    [{ listen: [] }, /listen \(MOCK_CELL_LISTEN\) must be a non-empty array/],
    [
      { listen: [{ cell: 'a', address: 'nope' }] },
      /listen \(MOCK_CELL_LISTEN\)\[0\]\.address .*must look like host:port/,
    ],
    [
      { listen: [{ cell: 'a', address: '127.0.0.1:1', port: 2 }] },
      /listen \(MOCK_CELL_LISTEN\)\[0\] has unknown field "port"/,
    ],
    [
      {
        listen: [
          { cell: 'a', address: '127.0.0.1:1' },
          { cell: 'a', address: '127.0.0.1:2' },
        ],
      },
      /\[1\]\.cell "a" is listed twice/,
    ],
    [
      {
        listen: [
          { cell: 'a', address: '127.0.0.1:1' },
          { cell: 'b', address: '127.0.0.1:1' },
        ],
      },
      /\[1\]\.address 127\.0\.0\.1:1 is listed twice/,
    ],
    [{ logLevel: 'loud' }, /logLevel \(MOCK_CELL_LOG_LEVEL\) must be one of/],
    [{ gitalyTokenFile: undefined }, /missing required setting gitalyTokenFile/],
    [{ extra: 1 }, /unknown setting "extra"/],
  ])('rejects %j with a message naming the setting', (change, message) => {
    const file: Record<string, unknown> = { ...FILE, ...change };
    for (const [k, v] of Object.entries(file)) if (v === undefined) delete file[k];
    expect(() => loadMockCellConfig(file, {})).toThrow(ConfigError);
    expect(() => loadMockCellConfig(file, {})).toThrow(message);
  });

  it('rejects a MOCK_CELL_LISTEN that is not JSON', () => {
    expect(() => loadMockCellConfig(FILE, { MOCK_CELL_LISTEN: 'cell_us0=127.0.0.1:1' })).toThrow(
      /must be a JSON array of \{cell, address\}/,
    );
  });
});

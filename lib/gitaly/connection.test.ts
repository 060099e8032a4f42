import { describe, expect, it } from 'vitest';
import { GitalyAddressError } from './address.js';
import { GitalyConnections } from './connection.js';

const options = {
  uploadPack: 'sidechannel' as const,
  keepaliveMs: 20_000,
  userAgent: 'test',
  flowControlWindow: 1 << 20,
  yamuxWindow: 256 * 1024,
};

describe('GitalyConnections', () => {
  it('keeps one connection per address and token', () => {
    const connections = new GitalyConnections(options);
    const a = connections.get('tcp://127.0.0.1:1', 'x');
    expect(connections.get('tcp://127.0.0.1:1', 'x')).toBe(a);
    expect(connections.get('tcp://127.0.0.1:1', 'y')).not.toBe(a);
    expect(connections.get('unix:/tmp/gitaly.sock', 'x').target.target).toBe('unix:/tmp/gitaly.sock');
    expect(connections.size).toBe(3);
    connections.close();
    expect(connections.size).toBe(0);
  });

  it('refuses an address Gitaly clients would not dial, before dialling', () => {
    const connections = new GitalyConnections(options);
    expect(() => connections.get('http://127.0.0.1:1', 'x')).toThrow(GitalyAddressError);
    expect(connections.size).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { GitalyAddressError, parseGitalyAddress } from './address.js';

describe('parseGitalyAddress', () => {
  it('turns tcp:// into a plain host:port target', () => {
    expect(parseGitalyAddress('tcp://127.0.0.1:9001')).toEqual({
      address: 'tcp://127.0.0.1:9001',
      target: '127.0.0.1:9001',
      tls: false,
    });
    expect(parseGitalyAddress('tcp://[::1]:9001').target).toBe('[::1]:9001');
  });

  it('keeps the host of tls:// for SNI and the certificate check', () => {
    expect(parseGitalyAddress('tls://gitaly.internal:9999')).toMatchObject({
      target: 'gitaly.internal:9999',
      tls: true,
      servername: 'gitaly.internal',
    });
  });

  it('accepts unix:/path and unix:///path', () => {
    expect(parseGitalyAddress('unix:/run/gitaly.sock').target).toBe('unix:/run/gitaly.sock');
    expect(parseGitalyAddress('unix:///run/gitaly.sock').target).toBe('unix:/run/gitaly.sock');
  });

  it.each([
    'unix:relative.sock',
    'dns:///host:9001',
    'http://host:9001',
    'tcp://host',
    'host:9001',
    'tcp://h:1/x',
    'tcp://h:1?x=1',
  ])('refuses %s and names the accepted forms', (address) => {
    expect(() => parseGitalyAddress(address)).toThrow(GitalyAddressError);
    expect(() => parseGitalyAddress(address)).toThrow(/tcp:\/\/host:port, tls:\/\/host:port or unix:\/path/);
  });
});

import { describe, expect, it } from 'vitest';
import { parseAcceptEncoding, wantsGzip } from './content-encoding.js';

describe('the info/refs answer encoding (Workhorse: gzip, then identity)', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['identity', false],
    ['gzip', true],
    ['deflate, gzip', true],
    ['deflate, gzip, br, zstd', true],
    ['GZIP', true],
    ['*', true],
    ['gzip;q=0', false],
    ['gzip;q=0.5, identity', false],
    ['gzip, identity;q=0.5', true],
    ['identity;q=0.2, gzip;q=0.2', true],
    ['*;q=0', false],
    ['br', false],
  ] as const)('Accept-Encoding %j → gzip %s', (header, gzip) => {
    expect(wantsGzip(header)).toBe(gzip);
  });

  it('drops entries whose weight is not a number between 0 and 1', () => {
    expect(parseAcceptEncoding('gzip;q=2, br;q=x, zstd;q=0.3, identity')).toEqual([
      { value: 'zstd', q: 0.3 },
      { value: 'identity', q: 1 },
    ]);
  });
});

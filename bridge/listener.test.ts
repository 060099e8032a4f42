import { describe, expect, it } from 'vitest';
import { H2_PREFACE, sniff } from './listener.js';

describe('sniff', () => {
  it('recognises the HTTP/2 preface, also when it arrives in pieces', () => {
    expect(sniff(H2_PREFACE, false)).toBe('h2c');
    expect(sniff(Buffer.concat([H2_PREFACE, Buffer.from('rest')]), false)).toBe('h2c');
    expect(sniff(H2_PREFACE.subarray(0, 1), false)).toBe('pending');
    expect(sniff(H2_PREFACE.subarray(0, 23), false)).toBe('pending');
    expect(sniff(Buffer.alloc(0), false)).toBe('pending');
  });

  it('sends everything else to HTTP/1.1', () => {
    expect(sniff(Buffer.from('POST /x HTTP/1.1\r\n'), false)).toBe('h1');
    expect(sniff(Buffer.from('PRI * HTTP/1.1\r\n'), false)).toBe('h1');
    expect(sniff(Buffer.from([0x16, 3, 1]), false)).toBe('h1');
  });

  it('recognises a TLS handshake only when TLS is enabled', () => {
    expect(sniff(Buffer.from([0x16, 3, 1]), true)).toBe('tls');
  });
});

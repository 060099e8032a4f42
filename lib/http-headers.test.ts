import { describe, expect, it } from 'vitest';
import {
  appendForwardedFor,
  connectionNamed,
  endToEndHeaders,
  forwardedClient,
  HOP_BY_HOP,
  headerValue,
} from './http-headers.js';

describe('endToEndHeaders', () => {
  it('drops hop-by-hop headers, pseudo-headers and extra names, and lower-cases the rest', () => {
    const headers = {
      ':path': '/x',
      Connection: 'keep-alive',
      'Keep-Alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      te: 'trailers',
      'proxy-authorization': 'Basic x',
      'http2-settings': 'AAA',
      host: 'gitlab.example',
      Accept: 'text/html',
      'set-cookie': ['a=1', 'b=2'],
    };
    expect(endToEndHeaders(headers, new Set(['host']))).toEqual({
      accept: 'text/html',
      'set-cookie': ['a=1', 'b=2'],
    });
  });

  it('drops the headers a Connection header names (RFC 9110 §7.6.1)', () => {
    expect(
      endToEndHeaders({
        connection: 'close, X-Trace ,x-debug',
        'x-trace': '1',
        'x-debug': 'on',
        'x-kept': 'y',
      }),
    ).toEqual({ 'x-kept': 'y' });
  });

  it('skips undefined values', () => {
    expect(endToEndHeaders({ a: undefined, b: 'x' })).toEqual({ b: 'x' });
  });

  it('covers the RFC 9110 list', () => {
    for (const h of [
      'connection',
      'keep-alive',
      'proxy-connection',
      'te',
      'trailer',
      'transfer-encoding',
      'upgrade',
    ])
      expect(HOP_BY_HOP.has(h)).toBe(true);
  });
});

describe('header helpers', () => {
  it('headerValue takes the first of repeated values', () => {
    expect(headerValue({ a: ['1', '2'] }, 'a')).toBe('1');
    expect(headerValue({ a: '1' }, 'a')).toBe('1');
    expect(headerValue({}, 'a')).toBeUndefined();
  });

  it('connectionNamed lists the named headers in lower case', () => {
    expect([...connectionNamed({ connection: 'Upgrade, X-A' })]).toEqual(['upgrade', 'x-a']);
    expect(connectionNamed({}).size).toBe(0);
  });

  it('appendForwardedFor appends the client to the chain', () => {
    expect(appendForwardedFor(undefined, '10.0.0.1')).toBe('10.0.0.1');
    expect(appendForwardedFor('', '10.0.0.1')).toBe('10.0.0.1');
    expect(appendForwardedFor('1.1.1.1', '10.0.0.1')).toBe('1.1.1.1, 10.0.0.1');
  });

  it('forwardedClient is the first hop', () => {
    expect(forwardedClient({ 'x-forwarded-for': ' 1.1.1.1 , 10.0.0.1' })).toBe('1.1.1.1');
    expect(forwardedClient({ 'x-forwarded-for': '' })).toBeUndefined();
    expect(forwardedClient({})).toBeUndefined();
  });
});

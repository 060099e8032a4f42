import { describe, expect, it } from 'vitest';
import { endToEndHeaders } from '../lib/http-headers.js';
import { correlationIdFrom, passbackHeaders, preauthHeaders, proxyRequestHeaders } from './headers.js';

describe('headers', () => {
  it('cleans client headers for pre-authorization and adds the Workhorse identity', () => {
    const out = preauthHeaders(
      {
        ':method': 'POST',
        ':path': '/p.git/ssh-upload-pack',
        ':authority': 'bridge:4001',
        'content-type': 'application/octet-stream',
        'content-length': '10',
        'content-encoding': 'gzip',
        'content-disposition': 'x',
        'accept-encoding': 'gzip',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive, x-custom',
        'x-custom': '1',
        te: 'trailers',
        'gitlab-shell-api-request': 'jwt',
        'git-protocol': 'version=2',
        authorization: 'GL-Geo a:b',
      },
      { version: 'v1', workhorseJwt: 'wjwt', correlationId: 'cid' },
    );
    expect(out).toEqual({
      host: 'bridge:4001',
      'gitlab-shell-api-request': 'jwt',
      'git-protocol': 'version=2',
      authorization: 'GL-Geo a:b',
      'gitlab-workhorse': 'v1',
      'gitlab-workhorse-api-request': 'wjwt',
      'x-request-id': 'cid',
    });
  });

  it('drops Workhorse-internal headers from a refusal', () => {
    expect(
      passbackHeaders({
        'gitlab-workhorse-send-data': 'x',
        'gitlab-sv': 'x',
        'gitlab-lb': 'x',
        'content-length': '5',
        'www-authenticate': 'Basic',
        'x-gitlab-cell-redirect': 'cell_eu0',
      }),
    ).toEqual({ 'www-authenticate': 'Basic', 'x-gitlab-cell-redirect': 'cell_eu0' });
  });

  it('keeps a sane X-Request-Id and replaces an unsafe one', () => {
    expect(correlationIdFrom({ 'x-request-id': 'abc-123' })).toBe('abc-123');
    const fresh = correlationIdFrom({ 'x-request-id': 'bad id\n' });
    expect(fresh).not.toBe('bad id\n');
    expect(fresh).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sets forwarding headers on proxied requests', () => {
    const out = proxyRequestHeaders(
      { host: 'h', 'x-forwarded-proto': 'https', 'keep-alive': 'timeout=5' },
      { clientIp: '10.0.0.2', proto: 'http', correlationId: 'c' },
    );
    expect(out).toEqual({
      host: 'h',
      'x-forwarded-for': '10.0.0.2',
      'x-forwarded-proto': 'https',
      'x-request-id': 'c',
    });
  });

  it('keeps repeated headers as arrays', () => {
    expect(endToEndHeaders({ 'set-cookie': ['a=1', 'b=2'] })).toEqual({ 'set-cookie': ['a=1', 'b=2'] });
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postEndlessBodyReadingLate } from '../lib/test-support/late-reader.js';
import { Exchange } from './exchange.js';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

/** The raw HTTP/1.1 response bytes of one request the handler answers through an Exchange. */
async function rawResponse(handle: (ex: Exchange) => void): Promise<string> {
  const s = http.createServer((req, res) => handle(new Exchange(req, res)));
  server = s;
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  const socket = net.connect(port, '127.0.0.1');
  socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
  let text = '';
  socket.on('data', (c: Buffer) => {
    text += c.toString('latin1');
  });
  await new Promise<void>((resolve) => {
    const check = () => (text.endsWith('0\r\n\r\n') ? resolve() : setTimeout(check, 5));
    check();
  });
  socket.destroy();
  return text.slice(text.indexOf('\r\n\r\n') + 4);
}

describe('Exchange over HTTP/1.1', () => {
  it('sends each writeAll batch as one chunk, and ends the chunked body itself', async () => {
    const body = await rawResponse((ex) => {
      ex.begin(200, {});
      expect(ex.writeAll([Buffer.from('ab'), Buffer.alloc(0), Buffer.from('cde')])).toBe(true);
      ex.writeAll([]);
      ex.write(Buffer.from('keepalive'));
      ex.end([Buffer.from('x'), Buffer.from('yz')]);
    });
    expect(body).toBe('5\r\nabcde\r\n9\r\nkeepalive\r\n3\r\nxyz\r\n0\r\n\r\n');
  });

  it('ends a body with no batch after the headers as an empty chunked body', async () => {
    const body = await rawResponse((ex) => {
      ex.begin(200, {});
      ex.end();
    });
    expect(body).toBe('0\r\n\r\n');
  });
});

describe('Exchange.reject over HTTP/1.1', () => {
  it('closes lingering: a client still sending its body, reading late, gets the whole refusal', async () => {
    const s = http.createServer((req, res) => new Exchange(req, res).reject(404, {}, 'nope'));
    server = s;
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const text = await postEndlessBodyReadingLate((s.address() as AddressInfo).port);
    expect(text).toMatch(/^HTTP\/1\.1 404 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(text.endsWith('\r\n\r\nnope')).toBe(true);
  });
});

import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { lingerInsteadOfDestroySoon } from './lingering-close.js';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

/**
 * A client that sends a chunked body without end and does not read for 300 ms, then reads what
 * arrived: what a slow-to-read client of a refusal sees. `linger` chooses the server's close.
 */
async function refusedWhileSending(linger: boolean, lingerMs = 2000) {
  const closedAfter: number[] = [];
  const s = http.createServer((req, res) => {
    req.resume();
    const started = Date.now();
    req.socket.once('close', () => closedAfter.push(Date.now() - started));
    if (linger) lingerInsteadOfDestroySoon(req.socket, lingerMs);
    res.writeHead(404, { connection: 'close', 'content-length': '9' });
    res.end('not found');
  });
  server = s;
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const socket = net.connect((s.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.pause();
  socket.write('POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
  const chunk = `4000\r\n${'z'.repeat(0x4000)}\r\n`;
  const writer = setInterval(() => socket.writable && socket.write(chunk), 5);
  await sleep(300);
  let received = '';
  socket.on('data', (c: Buffer) => {
    received += c.toString('latin1');
  });
  socket.resume();
  await sleep(200);
  clearInterval(writer);
  socket.destroy();
  return { received, closedAfter };
}

describe('lingering close of a refused HTTP/1.1 request', () => {
  it("without it the kernel's reset destroys the answer the client had not read yet", async () => {
    const { received } = await refusedWhileSending(false);
    expect(received).not.toContain('404');
  });

  it('keeps the connection until the client is done, so the answer is read', async () => {
    const { received, closedAfter } = await refusedWhileSending(true);
    expect(received).toMatch(/^HTTP\/1\.1 404 /);
    expect(received).toContain('not found');
    // Open until the client, reading at 300 ms, saw the FIN and ended its side (not at once).
    expect(closedAfter[0]).toBeGreaterThanOrEqual(250);
  });

  it('ends a client that never stops sending after the linger time', async () => {
    const { closedAfter } = await refusedWhileSending(true, 100);
    expect(closedAfter[0]).toBeGreaterThanOrEqual(90);
    expect(closedAfter[0]).toBeLessThan(250);
  });
});

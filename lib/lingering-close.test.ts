import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lingerInsteadOfDestroySoon } from './lingering-close.js';
import { postEndlessBodyReadingLate } from './test-support/late-reader.js';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

/**
 * A refusal of a request whose body never ends, read 300 ms late by its client; `linger` chooses
 * the server's close.
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
  const received = await postEndlessBodyReadingLate((s.address() as AddressInfo).port);
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

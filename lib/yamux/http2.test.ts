import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { closed, nextStream, quiet, readAll, sessionPair, sha256, writeAll } from './test-support.js';

const MiB = 1024 * 1024;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * The main use: Node's http2 (and so grpc-js) running over a YamuxStream, the way the backchannel carries
 * gRPC on stream 1. The server side injects the accepted stream, the client side hands its stream over.
 */
describe('http2 over yamux', () => {
  it.each(['tcp', 'memory'] as const)('echoes a 10 MiB POST and ends cleanly (%s)', async (transport) => {
    const { client, server, close } = await sessionPair(transport, {}, { maxStreamWindow: 16 * MiB });
    cleanups.push(close);
    const h2server = http2.createServer();
    h2server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.pipe(stream);
    });
    cleanups.push(() => void h2server.close());
    const accepted = nextStream(server).then((s) => h2server.emit('connection', s));

    const stream1 = quiet(client.open());
    const h2 = http2.connect('http://x', { createConnection: () => stream1 });
    h2.on('error', () => undefined);
    await accepted;
    const body = randomBytes(10 * MiB);
    const req = h2.request({ ':method': 'POST', ':path': '/echo' });
    // One 10 MiB write would trip http2's maxSessionMemory (ENHANCE_YOUR_CALM) even over plain TCP, and
    // the echo must be read while the body is still going up, or HTTP/2 flow control stalls both.
    const response = once(req, 'response') as Promise<[http2.IncomingHttpHeaders]>;
    const [echoed] = await Promise.all([readAll(req), writeAll(req, body)]);
    expect((await response)[0][':status']).toBe(200);
    expect(sha256(echoed)).toBe(sha256(body));

    h2.close();
    await once(h2, 'close');
    await closed(stream1);
    expect(client.streamCount).toBe(0);
    expect(client.closed || server.closed).toBe(false);
  });

  it('carries several concurrent requests on one yamux stream', async () => {
    const { client, server, close } = await sessionPair('tcp');
    cleanups.push(close);
    const h2server = http2.createServer();
    h2server.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200 });
      stream.end(`path=${headers[':path']}`);
    });
    cleanups.push(() => void h2server.close());
    void nextStream(server).then((s) => h2server.emit('connection', s));
    const stream1 = quiet(client.open());
    const h2 = http2.connect('http://x', { createConnection: () => stream1 });
    cleanups.push(() => void h2.destroy());
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map(async (i) => {
        const req = h2.request({ ':path': `/${i}` });
        req.end();
        return (await readAll(req)).toString();
      }),
    );
    expect(answers).toEqual(['path=/1', 'path=/2', 'path=/3', 'path=/4', 'path=/5']);
  });
});

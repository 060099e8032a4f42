import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readExactly } from './read-exactly.js';

describe('readExactly', () => {
  it('returns the first n bytes across chunks and leaves the rest in the stream', async () => {
    const s = new PassThrough();
    const read = readExactly(s, 5, { timeoutMs: 1000 });
    s.write('ab');
    s.write('cdefg');
    expect(await read).toEqual({ ok: true, bytes: Buffer.from('abcde') });
    expect((s.read() as Buffer).toString()).toBe('fg');
  });

  it('says the stream ended and how many bytes came before', async () => {
    const s = new PassThrough();
    const read = readExactly(s, 4, { timeoutMs: 1000 });
    s.end('xy');
    expect(await read).toMatchObject({ ok: false, reason: 'end', received: 2 });
  });

  it('says the stream failed, with the error', async () => {
    const s = new PassThrough();
    const read = readExactly(s, 4, { timeoutMs: 1000 });
    s.destroy(new Error('boom'));
    const r = await read;
    expect(r).toMatchObject({ ok: false, reason: 'error', received: 0 });
    expect(r.ok ? undefined : r.err?.message).toBe('boom');
  });

  it('gives up when the time runs out or the signal fires', async () => {
    expect(await readExactly(new PassThrough(), 1, { timeoutMs: 20 })).toMatchObject({ reason: 'timeout' });
    const abort = new AbortController();
    const read = readExactly(new PassThrough(), 1, { timeoutMs: 5000, signal: abort.signal });
    abort.abort();
    expect(await read).toMatchObject({ reason: 'aborted' });
    const already = AbortSignal.abort();
    expect(await readExactly(new PassThrough(), 1, { timeoutMs: 5000, signal: already })).toMatchObject({
      reason: 'aborted',
    });
  });

  it('takes bytes that arrived before the deadline even when the event loop stalled past it', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    const [socket] = await accepted;
    try {
      const read = readExactly(socket, 2, { timeoutMs: 30 });
      client.write('ok');
      // The bytes are in the kernel at once; the loop is busy past the deadline. Node runs the
      // expired timer before it polls the socket: the read must still see them.
      const until = Date.now() + 150;
      while (Date.now() < until) {}
      expect(await read).toEqual({ ok: true, bytes: Buffer.from('ok') });
    } finally {
      client.destroy();
      socket.destroy();
      server.close();
    }
  });
});

import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { encodeErrorFrame, encodeExitStatus, encodeFrame, ResponseFrame } from '../../lib/framing.js';
import { encodePkt, FLUSH_PKT } from '../../lib/pktline.js';
import { AdvertisementFilter, relayResponse, TunnelProtocolError } from './response.js';

function sinks() {
  const out = { stdout: '', stderr: '' };
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (d: Buffer) => {
    out.stdout += d.toString();
  });
  stderr.on('data', (d: Buffer) => {
    out.stderr += d.toString();
  });
  return { out, targets: { stdout, stderr } };
}

function body(...chunks: Buffer[]) {
  const b = new PassThrough();
  for (const c of chunks) b.write(c);
  b.end();
  return b;
}

describe('relayResponse', () => {
  it('writes the stdout of one turn once, corked, and stderr in order after the stdout before it', async () => {
    let depth = 0;
    let corks = 0;
    const writes: string[] = [];
    const recorder = (name: string) =>
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          writes.push(`${name}:${chunk.toString()}${depth > 0 ? '' : ' (uncorked)'}`);
          cb();
        },
      });
    const transport = {
      cork: () => {
        depth++;
        corks++;
      },
      uncork: () => {
        depth--;
      },
    };
    const frame = (type: number, text: string) => encodeFrame(type, Buffer.from(text));
    const response = body(
      frame(ResponseFrame.stdout, 'a'),
      frame(ResponseFrame.stdout, 'b'),
      frame(ResponseFrame.stderr, 'e'),
      frame(ResponseFrame.stdout, 'c'),
      Buffer.concat([frame(ResponseFrame.stdout, 'd'), encodeExitStatus(0)]),
    );
    await relayResponse(response, true, { stdout: recorder('out'), stderr: recorder('err'), transport });
    expect(writes).toEqual(['out:ab', 'err:e', 'out:cd']);
    expect(corks).toBeGreaterThan(0);
    expect(depth).toBe(0);
  });

  it('batches no more than 256 KiB of stdout before writing', async () => {
    const writes: number[] = [];
    const stdout = new Writable({
      highWaterMark: 16 << 20,
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk.length);
        cb();
      },
    });
    const frames = Array.from({ length: 40 }, () => encodeFrame(ResponseFrame.stdout, Buffer.alloc(16384)));
    await relayResponse(body(...frames, encodeExitStatus(0)), true, { stdout, stderr: new PassThrough() });
    expect(writes.reduce((a, b) => a + b, 0)).toBe(40 * 16384);
    expect(Math.max(...writes)).toBe(256 * 1024);
  });

  it('splits framed responses into stdout, stderr, exit status and error', async () => {
    const { out, targets } = sinks();
    const framed = Buffer.concat([
      encodeFrame(ResponseFrame.keepalive),
      encodeFrame(ResponseFrame.stdout, Buffer.from('pack')),
      encodeFrame(ResponseFrame.stderr, Buffer.from('Counting objects\n')),
      encodeErrorFrame('INTERNAL', 'boom'),
      encodeExitStatus(2),
    ]);
    // One byte at a time: frames must be reassembled.
    const outcome = await relayResponse(body(...[...framed].map((b) => Buffer.from([b]))), true, targets);
    expect(outcome).toEqual({
      framed: true,
      exitStatus: 2,
      error: { code: 'INTERNAL', message: 'boom' },
      wroteStderr: true,
    });
    expect(out).toEqual({ stdout: 'pack', stderr: 'Counting objects\n' });
  });

  it('copies an unframed response to stdout', async () => {
    const { out, targets } = sinks();
    const outcome = await relayResponse(body(Buffer.from([0x01, 0x02]), Buffer.from('raw')), false, targets);
    expect(outcome.exitStatus).toBeUndefined();
    expect(out.stdout).toBe('\u0001\u0002raw');
  });

  it('rejects unknown frame types and truncated frames', async () => {
    await expect(
      relayResponse(body(Buffer.from([0x07, 0, 0, 0, 0])), true, sinks().targets),
    ).rejects.toBeInstanceOf(TunnelProtocolError);
    await expect(
      relayResponse(
        body(encodeFrame(ResponseFrame.stdout, Buffer.from('abc')).subarray(0, 6)),
        true,
        sinks().targets,
      ),
    ).rejects.toThrow('ended inside a frame');
  });

  it('rejects when the body closes before its end', async () => {
    const b = new PassThrough();
    const p = relayResponse(b, true, sinks().targets);
    b.destroy();
    await expect(p).rejects.toThrow('closed before its end');
  });

  it('pauses the response while stdout is full', async () => {
    let release: () => void = () => {};
    const written: string[] = [];
    const stdout = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk.toString());
        release = cb;
      },
    });
    const b = new PassThrough();
    const p = relayResponse(b, false, { stdout, stderr: new PassThrough() });
    b.write('first');
    await new Promise((r) => setImmediate(r));
    expect(b.isPaused()).toBe(true);
    b.end('second');
    release();
    await new Promise((r) => setImmediate(r));
    release();
    await p;
    expect(written).toEqual(['first', 'second']);
  });

  it('leaves no listener on a full target or on the body once the response is over', async () => {
    const stdout = new Writable({ highWaterMark: 1, write: () => undefined });
    const b = new PassThrough();
    const p = relayResponse(b, false, { stdout, stderr: new PassThrough() });
    b.write('stuck');
    await new Promise((r) => setImmediate(r));
    expect(stdout.listenerCount('drain')).toBe(1);
    b.destroy();
    await expect(p).rejects.toThrow('closed before its end');
    expect(stdout.listenerCount('drain')).toBe(0);
    expect(stdout.listenerCount('close')).toBe(0);
    expect(b.listenerCount('data')).toBe(0);
    expect(b.listenerCount('end')).toBe(0);
  });
});

describe('relayResponse over HTTP/2', () => {
  it('relays a response the bridge resets after answering in full while the channel was full', async () => {
    const server = http2.createServer();
    // The bridge's habit: the whole answer, then RST_STREAM(NO_ERROR) while our request is still open.
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.write(Buffer.alloc(4096, 1));
      setImmediate(() =>
        stream.end(Buffer.alloc(4096, 2), () => stream.close(http2.constants.NGHTTP2_NO_ERROR)),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const req = session.request({ ':method': 'POST', ':path': '/' }, { endStream: false });
      req.on('error', () => undefined);
      const aborted = new Promise((resolve) => req.once('aborted', resolve));
      await new Promise((resolve) => req.once('response', resolve));
      const written: Buffer[] = [];
      let release: () => void = () => undefined;
      const stdout = new Writable({
        highWaterMark: 1,
        write(chunk: Buffer, _enc, cb) {
          written.push(chunk);
          release = cb;
        },
      });
      const relayed = relayResponse(req, false, { stdout, stderr: new PassThrough() });
      // The channel is full: the rest of the answer, its end and the reset arrive meanwhile.
      await aborted;
      const drain = setInterval(() => release(), 5);
      await relayed.finally(() => clearInterval(drain));
      expect(Buffer.concat(written).length).toBe(8192);
    } finally {
      session.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('AdvertisementFilter', () => {
  const advertisement = Buffer.concat([
    encodePkt('version 1\n'),
    encodePkt('abc refs/heads/main\0caps\n'),
    FLUSH_PKT,
  ]);
  const rest = Buffer.concat([encodePkt('unpack ok\n'), encodePkt('ok refs/heads/main\n'), FLUSH_PKT]);

  it('keeps the advertisement through its flush and drops what follows', () => {
    const f = new AdvertisementFilter('advertisement');
    const bytes = Buffer.concat([advertisement, rest]);
    const kept = Buffer.concat([f.push(bytes.subarray(0, 7)), f.push(bytes.subarray(7))]);
    expect(kept.toString()).toBe(advertisement.toString());
    expect(f.complete).toBe(true);
  });

  it('drops the repeated advertisement and relays the rest, split anywhere', () => {
    const bytes = Buffer.concat([advertisement, rest]);
    for (let cut = 0; cut <= bytes.length; cut += 5) {
      const f = new AdvertisementFilter('rest');
      const relayed = Buffer.concat([f.push(bytes.subarray(0, cut)), f.push(bytes.subarray(cut))]);
      expect(relayed.toString()).toBe(rest.toString());
    }
  });

  it('is not complete while the flush has not come', () => {
    const f = new AdvertisementFilter('advertisement');
    f.push(encodePkt('abc refs/heads/main\n'));
    expect(f.complete).toBe(false);
  });
});

import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitalySshCall } from '../lib/gitaly/index.js';
import { Exchange } from './exchange.js';
import { compatibleEncoder } from './response-encoder.js';
import { TunnelStream, type TunnelStreamResult } from './tunnel-stream.js';

/** A Gitaly call whose stdin is always full and whose output the test pushes. */
class FullCall extends EventEmitter implements GitalySshCall {
  readonly transport = 'stream';
  outputPaused = false;
  writeStdin(): boolean {
    return false;
  }
  endStdin(): void {}
  pauseOutput(): void {
    this.outputPaused = true;
  }
  resumeOutput(): void {
    this.outputPaused = false;
  }
  cancel(): void {
    setImmediate(() => this.emit('end', { code: GrpcStatus.CANCELLED, details: 'cancelled' }));
  }
}

const OPTIONS = {
  encoder: compatibleEncoder,
  bodyFramed: false,
  maxBodyBytes: 0,
  uploadPackMode: undefined,
  idleTimeoutMs: 0,
  maxDurationMs: 0,
  keepaliveMs: 5000,
  onBytesIn: () => {},
  onBytesOut: () => {},
};

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

describe('TunnelStream drain waits', () => {
  it('removes its drain listeners from the response and the call when the client goes away', async () => {
    const call = new FullCall();
    let res: http.ServerResponse | undefined;
    let settle: (r: TunnelStreamResult) => void = () => {};
    const ended = new Promise<TunnelStreamResult>((resolve) => {
      settle = resolve;
    });
    const s = http.createServer((req, r) => {
      res = r;
      const ex = new Exchange(req, r);
      ex.begin(200, {});
      void new TunnelStream(ex, call, OPTIONS).run().then(settle);
      // Output until the response is backpressured (the client never reads).
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      const push = () => {
        if (call.outputPaused) return;
        call.emit('output', 'stdout', chunk);
        setImmediate(push);
      };
      push();
    });
    server = s;
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    const client = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/' });
    client.on('error', () => {});
    client.on('response', (incoming) => incoming.pause());
    client.write('stdin that git never reads');

    await expect.poll(() => call.outputPaused && call.listenerCount('drain') === 1).toBe(true);
    expect(res?.listenerCount('drain')).toBeGreaterThan(0);
    client.destroy();
    const result = await ended;
    expect(result.outcome).toBe('client-gone');
    expect(call.listenerCount('drain')).toBe(0);
    expect(res?.listenerCount('drain')).toBe(0);
  });
});

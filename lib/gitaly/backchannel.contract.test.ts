import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGitalyAddress } from './address.js';
import { BackchannelCredentials } from './backchannel.js';
import { SidechannelRegistry } from './registry.js';

/**
 * `BackchannelCredentials` relies on grpc-js's internal `_createSecureConnector` hook (1.14.x):
 * grpc-js dials TCP and hands the socket to our connector, which writes the backchannel magic.
 * These tests fail loudly when an upgrade changes that.
 */
describe('grpc-js contract of BackchannelCredentials', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it('runs on the pinned grpc-js 1.14', () => {
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(readFileSync(require.resolve('@grpc/grpc-js/package.json'), 'utf8')) as {
      version: string;
    };
    expect(pkg.version).toMatch(/^1\.14\./);
    expect(typeof grpc.ChannelCredentials.prototype.compose).toBe('function');
  });

  it('hands the TCP socket to our connector, which writes `backchannel` first', async () => {
    const first = new Promise<Buffer>((resolve) => {
      const server = net.createServer((socket) => {
        socket.once('data', (chunk: Buffer) => {
          resolve(chunk.subarray(0, 11));
          socket.destroy();
        });
      });
      server.listen(0, '127.0.0.1');
      cleanups.push(() => server.close());
      server.once('listening', () => {
        const { port } = server.address() as net.AddressInfo;
        const creds = new BackchannelCredentials({
          target: parseGitalyAddress(`tcp://127.0.0.1:${port}`),
          registry: new SidechannelRegistry(),
          yamuxWindow: 256 * 1024,
        });
        const client = new grpc.Client(`127.0.0.1:${port}`, creds);
        cleanups.push(() => client.close());
        client.waitForReady(Date.now() + 5000, () => {});
      });
    });
    expect((await first).toString()).toBe('backchannel');
  });
});

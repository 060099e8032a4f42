import * as http2 from 'node:http2';
import { createServer, type Server, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../test/helpers/poll.js';
import { RECEIVE_CONNECTION_WINDOW, RECEIVE_STREAM_WINDOW, widenReceiveWindows } from './grpc-servers.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A grpc-js server fed through a connection injector (as mock Gitaly's listeners do) on a loopback port. */
async function injectedServer(widen: boolean): Promise<number> {
  const server = new grpc.Server();
  if (widen) widenReceiveWindows(server);
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const sockets: Socket[] = [];
  const tcp: Server = createServer((socket) => {
    sockets.push(socket);
    injector.injectConnection(socket);
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    tcp.close();
    server.forceShutdown();
  });
  const address = tcp.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function windowsSeenByClient(port: number) {
  const client = http2.connect(`http://127.0.0.1:${port}`);
  cleanups.push(() => client.destroy());
  await new Promise<void>((resolve, reject) => {
    client.once('remoteSettings', () => resolve());
    client.once('error', reject);
  });
  return client;
}

describe('widenReceiveWindows', () => {
  it('announces the stream window and grants the connection window to every client', async () => {
    const client = await windowsSeenByClient(await injectedServer(true));
    expect(client.remoteSettings.initialWindowSize).toBe(RECEIVE_STREAM_WINDOW);
    await waitUntil(() => (client.state.remoteWindowSize ?? 0) >= RECEIVE_CONNECTION_WINDOW, 5_000);
  });

  it('leaves grpc-js at HTTP/2 defaults without it (what the test above guards against)', async () => {
    const client = await windowsSeenByClient(await injectedServer(false));
    expect(client.remoteSettings.initialWindowSize).toBe(65_535);
    expect(client.state.remoteWindowSize).toBe(65_535);
  });
});

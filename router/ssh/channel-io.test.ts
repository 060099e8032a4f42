import type { AddressInfo } from 'node:net';
import { Client, Server, type ServerChannel, utils } from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { finishChannel } from './channel-io.js';

/**
 * `finishChannel` sends `exit-status` after EOF through ssh2's internals (`_client._protocol` and
 * `outgoing`); these tests pin that path against the pinned ssh2 with a real client and server, so an
 * upgrade that moves the internals fails here and not in a user's terminal.
 */
const hostKey = utils.generateKeyPairSync('ed25519').private;

interface Run {
  events: string[];
  exitCode: number | undefined;
  stdout: string;
  internals: { exitStatus: unknown; id: unknown };
  /** Packets as they arrived. */
  wire: string[];
}

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

function runExec(serve: (channel: ServerChannel) => Promise<void>): Promise<Run> {
  const run: Run = {
    events: [],
    exitCode: undefined,
    stdout: '',
    internals: { exitStatus: undefined, id: undefined },
    wire: [],
  };
  const server = new Server({ hostKeys: [hostKey] }, (conn) => {
    conn.on('authentication', (ctx) => ctx.accept());
    conn.on('session', (accept) => {
      accept().on('exec', (acceptExec) => {
        const channel = acceptExec();
        const raw = channel as unknown as {
          outgoing?: { id?: unknown };
          _client?: { _protocol?: { exitStatus?: unknown } };
        };
        run.internals = { exitStatus: raw._client?._protocol?.exitStatus, id: raw.outgoing?.id };
        void serve(channel);
      });
    });
  });
  cleanup.push(() => server.close());
  return new Promise((resolve, reject) => {
    server.listen(0, '127.0.0.1', () => {
      const client = new Client();
      cleanup.push(() => client.end());
      client.on('error', reject);
      client.on('ready', () => {
        client.exec('git-upload-pack x', (err, stream) => {
          if (err) return reject(err);
          stream.on('data', (d: Buffer) => {
            run.stdout += d.toString();
            if (run.events.at(-1) !== 'data') run.events.push('data');
          });
          stream.on('end', () => run.events.push('eof'));
          stream.on('exit', (code: number) => {
            run.exitCode = code;
            run.events.push('exit-status');
          });
          stream.on('close', () => {
            run.events.push('close');
            resolve(run);
          });
        });
      });
      client.connect({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        username: 'git',
        password: 'x',
        // ssh2 names each packet it receives: the wire order, which the stream events blur.
        debug: (msg: string) => {
          if (msg.startsWith('Inbound: CHANNEL_EOF')) run.wire.push('eof');
          else if (/^Inbound: CHANNEL_REQUEST \(r:\d+, exit-status/.test(msg)) run.wire.push('exit-status');
          else if (msg.startsWith('Inbound: CHANNEL_CLOSE')) run.wire.push('close');
        },
      });
    });
  });
}

describe('finishChannel (ssh2 internals pinned)', () => {
  it('finds the internals it relies on in the pinned ssh2', async () => {
    const run = await runExec((channel) => finishChannel(channel, 0));
    expect(typeof run.internals.exitStatus).toBe('function');
    expect(typeof run.internals.id).toBe('number');
  });

  it('flushes the output, then sends EOF, then exit-status, then closes', async () => {
    const run = await runExec(async (channel) => {
      channel.write('x'.repeat(200_000));
      await finishChannel(channel, 3);
    });
    expect(run.stdout.length).toBe(200_000);
    expect(run.exitCode).toBe(3);
    expect(run.wire).toEqual(['eof', 'exit-status', 'close']);
    expect(run.events.at(-1)).toBe('close');
  });
});

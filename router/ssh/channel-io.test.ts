import type { AddressInfo } from 'node:net';
import { Client, Server, type ServerChannel, utils } from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { finishChannel, keepWindowResumes } from './channel-io.js';

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

interface SlowRun {
  stdoutBytes: number;
  /** Whether the bytes received on stdout are exactly the bytes written, in order. */
  stdoutIntact: boolean;
  stderr: string;
  exitCode: number | undefined;
}

/**
 * A client that reads nothing for `pauseMs` (its channel window fills up, so the server's writes
 * wait for a WINDOW_ADJUST), then reads everything; resolves at CHANNEL_CLOSE, rejects after `limitMs`.
 */
function runSlowReader(
  serve: (channel: ServerChannel) => Promise<void>,
  expected: Buffer,
  pauseMs: number,
  limitMs: number,
): Promise<SlowRun> {
  const server = new Server({ hostKeys: [hostKey] }, (conn) => {
    conn.on('authentication', (ctx) => ctx.accept());
    conn.on('session', (accept) => accept().on('exec', (acceptExec) => void serve(acceptExec())));
  });
  cleanup.push(() => server.close());
  return new Promise((resolve, reject) => {
    const limit = setTimeout(() => reject(new Error(`no CHANNEL_CLOSE within ${limitMs} ms`)), limitMs);
    cleanup.push(() => clearTimeout(limit));
    server.listen(0, '127.0.0.1', () => {
      const client = new Client();
      cleanup.push(() => client.end());
      client.on('error', reject);
      client.on('ready', () => {
        client.exec('git-upload-pack x', (err, stream) => {
          if (err) return reject(err);
          const chunks: Buffer[] = [];
          const run: SlowRun = { stdoutBytes: 0, stdoutIntact: false, stderr: '', exitCode: undefined };
          stream.pause();
          setTimeout(() => {
            stream.on('data', (d: Buffer) => chunks.push(d));
            stream.resume();
          }, pauseMs);
          stream.stderr.on('data', (d: Buffer) => {
            run.stderr += d.toString();
          });
          stream.on('exit', (code: number) => {
            run.exitCode = code;
          });
          stream.on('close', () => {
            const got = Buffer.concat(chunks);
            run.stdoutBytes = got.length;
            run.stdoutIntact = got.equals(expected);
            resolve(run);
          });
        });
      });
      client.connect({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        username: 'git',
        password: 'x',
      });
    });
  });
}

describe('a slow-reading client (the channel window is full)', () => {
  // More than ssh2's 2 MiB channel window: part of it waits for the client's WINDOW_ADJUST.
  const payload = Buffer.alloc(3 * 1024 * 1024 + 12_345, 0);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 31 + (i >> 12)) & 0xff;

  it('still gets the error on stderr and the session ends when stdout and stderr both wait', async () => {
    const run = await runSlowReader(
      async (channel) => {
        keepWindowResumes(channel);
        channel.write(payload);
        // What a tunnel that broke mid-stream does: an error on stderr while stdout still waits.
        channel.stderr.write('remote: ERROR: Remote repository is unavailable\n');
        await finishChannel(channel, 1);
      },
      payload,
      300,
      15_000,
    );
    expect(run.stderr).toBe('remote: ERROR: Remote repository is unavailable\n');
    expect(run.stdoutBytes).toBe(payload.length);
    expect(run.stdoutIntact).toBe(true);
    expect(run.exitCode).toBe(1);
  }, 20_000);

  it('does not send stdout bytes twice when stderr waits after stdout has waited once', async () => {
    const tail = Buffer.from('tail of the pack');
    const run = await runSlowReader(
      async (channel) => {
        keepWindowResumes(channel);
        channel.write(payload);
        await new Promise((r) => channel.write(Buffer.alloc(0), r));
        // Fill the window again, then make stderr wait as well.
        channel.write(tail);
        channel.stderr.write(Buffer.alloc(2 * 1024 * 1024 + 1, 0x65));
        await finishChannel(channel, 0);
      },
      Buffer.concat([payload, tail]),
      300,
      15_000,
    );
    expect(run.stdoutIntact).toBe(true);
    expect(run.stderr.length).toBe(2 * 1024 * 1024 + 1);
    expect(run.exitCode).toBe(0);
  }, 20_000);
});

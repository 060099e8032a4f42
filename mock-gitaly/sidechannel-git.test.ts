import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { encodeStdin, SidebandReader, STDIN_FLUSH } from '../lib/sidechannel.js';
import { baseEnv } from './git-command.js';
import { GitProcessRegistry } from './git-process.js';
import { GitRun } from './git-run.js';
import { closeSidechannel, pipeSidechannelStdin, sidebandOutput } from './sidechannel-git.js';

/** The sidechannel transport of a git process, over an in-memory duplex standing in for a yamux stream. */

const logger = createLogger('sidechannel-git-test', 'silent');
const processes = new GitProcessRegistry();
const sh = (script: string) => ({ file: 'sh', args: ['-c', script], env: baseEnv(), cwd: '/' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(async () => {
  processes.killAll();
  await processes.drained(3000);
});

function run(script: string) {
  const toServer = new PassThrough();
  const fromServer = new PassThrough({ highWaterMark: 64 * 1024 });
  const duplex = makeDuplex(toServer, fromServer);
  const git = new GitRun({ command: sh(script), logger, processes, output: sidebandOutput(duplex) });
  const stdin: Buffer[] = [];
  const detach = pipeSidechannelStdin(duplex, git, logger, { onStdin: (d) => stdin.push(d) });
  return { git, duplex, toServer, fromServer, stdin, detach };
}

/** A duplex standing in for the yamux stream: reads what the client writes, writes what it reads. */
function makeDuplex(readable: PassThrough, writable: PassThrough): Duplex {
  const d = new Duplex({
    allowHalfOpen: true,
    highWaterMark: 64 * 1024,
    read() {
      readable.resume();
    },
    write(chunk, _enc, cb) {
      if (writable.write(chunk)) cb();
      else writable.once('drain', () => cb());
    },
    final(cb) {
      writable.end();
      cb();
    },
  });
  readable.on('data', (c: Buffer) => {
    if (!d.push(c)) readable.pause();
  });
  readable.on('end', () => d.push(null));
  return d;
}

function demux(out: PassThrough) {
  const bands = { 1: [] as Buffer[], 2: [] as Buffer[] };
  const reader = new SidebandReader((band, data) => bands[band].push(data));
  out.on('data', (c: Buffer) => reader.push(c));
  const ended = new Promise<void>((resolve) => out.on('end', () => resolve()));
  return { ended, text: (band: 1 | 2) => Buffer.concat(bands[band]).toString() };
}

describe('pipeSidechannelStdin and sidebandOutput', () => {
  it('de-frames stdin up to the flush, drops what follows, and sends bands 1 and 2', async () => {
    const t = run('tr a-z A-Z; echo oops >&2');
    const out = demux(t.fromServer);
    t.toServer.write(
      Buffer.concat([...encodeStdin(Buffer.from('hello ')), ...encodeStdin(Buffer.from('world'))]),
    );
    t.toServer.write(Buffer.concat([STDIN_FLUSH, Buffer.from('0009trash')]));
    const result = await t.git.done;
    t.detach();
    await closeSidechannel(t.duplex);
    await out.ended;
    expect(result.outcome).toBe('ok');
    expect(out.text(1)).toBe('HELLO WORLD');
    expect(out.text(2)).toBe('oops\n');
    expect(Buffer.concat(t.stdin).toString()).toBe('hello world');
  });

  it('a stream that ends without the flush ends git stdin all the same', async () => {
    const t = run('wc -c');
    const out = demux(t.fromServer);
    t.toServer.end(Buffer.concat(encodeStdin(Buffer.from('abc'))));
    const result = await t.git.done;
    await closeSidechannel(t.duplex);
    await out.ended;
    expect(result.outcome).toBe('ok');
    expect(out.text(1).trim()).toBe('3');
  });

  it('a broken stream kills git', async () => {
    const t = run('sleep 30');
    await sleep(100);
    t.duplex.destroy(new Error('reset'));
    const result = await t.git.done;
    expect(result.outcome).toBe('cancelled');
  });

  it('a client that does not read stalls git instead of filling memory', async () => {
    const t = run(`head -c ${8 * 1024 * 1024} /dev/zero`);
    t.toServer.write(STDIN_FLUSH);
    await sleep(700);
    expect(t.fromServer.readableLength + t.duplex.writableLength).toBeLessThan(1024 * 1024);
    expect(t.git.exited).toBe(false);
    let bytes = 0;
    const reader = new SidebandReader((_band, data) => {
      bytes += data.length;
    });
    t.fromServer.on('data', (c: Buffer) => reader.push(c));
    const result = await t.git.done;
    expect(result.outcome).toBe('ok');
    await closeSidechannel(t.duplex);
    expect(bytes).toBe(8 * 1024 * 1024);
  });
});

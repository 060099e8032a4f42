import type { Writable } from 'node:stream';
import type { ServerChannel } from 'ssh2';

/**
 * Ending a session channel the way gitlab-sshd does: everything written is flushed, then EOF, then
 * the `exit-status` request, then CHANNEL_CLOSE. ssh2's public `exit()` refuses to send after EOF,
 * so the status goes through the connection's protocol object; when that internal is missing the
 * status is sent just before EOF instead (clients accept both orders).
 */
interface ChannelInternals {
  outgoing?: { id: number; state: string };
  _client?: { _protocol?: { exitStatus?: (id: number, status: number) => void } };
}

/** Resolves once every byte written so far has been handed to SSH (or the channel closed). */
function flushed(w: Writable, channel: ServerChannel): Promise<void> {
  if (w.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      channel.off('close', done);
      resolve();
    };
    channel.once('close', done);
    w.write(Buffer.alloc(0), done);
  });
}

export function channelOpen(channel: ServerChannel): boolean {
  const state = (channel as unknown as ChannelInternals).outgoing?.state;
  return state === undefined ? channel.writable : state === 'open';
}

export async function finishChannel(channel: ServerChannel, exitStatus: number): Promise<void> {
  await flushed(channel.stderr, channel);
  await flushed(channel, channel);
  if (!channelOpen(channel)) return;
  const internals = channel as unknown as ChannelInternals;
  const sendStatus = internals._client?._protocol?.exitStatus;
  const id = internals.outgoing?.id;
  if (typeof sendStatus === 'function' && id !== undefined) {
    channel.eof();
    sendStatus.call(internals._client?._protocol, id, exitStatus);
  } else {
    channel.exit(exitStatus);
    channel.eof();
  }
  channel.end();
  channel.close();
}

type WriteCallback = (err?: Error | null) => void;
type RawWrite = (data: Buffer, encoding: BufferEncoding | null, cb: WriteCallback) => void;

/** ssh2's per-channel output state: the write that waits for window, per stream. */
interface WindowInternals {
  _write?: RawWrite;
  _waitWindow?: boolean;
  _chunk?: Buffer;
  _chunkcb?: WriteCallback;
  _chunkErr?: Buffer;
  _chunkcbErr?: WriteCallback;
  outgoing?: { window: number; state: string };
  stderr?: { _write?: RawWrite };
}

/**
 * Repairs two flaws of ssh2 1.17.0's server when stdout and stderr both wait for window (a slow
 * reader that gets an error message while a pack is still queued). On WINDOW_ADJUST ssh2 resumes
 * only one of them, stdout first, so a waiting stderr write is never resumed and `finishChannel`
 * waits forever; and it never forgets a resumed stdout chunk, so a later stderr wait re-sends those
 * stdout bytes (and calls their callback twice). Here a finished write forgets its chunk and, while
 * window is left, resumes the other stream's waiting write. A no-op when the internals are missing.
 */
export function keepWindowResumes(channel: ServerChannel): void {
  const c = channel as unknown as WindowInternals;
  const stderr = c.stderr;
  const writeOut = c._write?.bind(c);
  const writeErr = stderr?._write?.bind(stderr);
  if (!stderr || !writeOut || !writeErr || !c.outgoing) return;
  const wrapped = new WeakSet<WriteCallback>();
  const resume = (first: 'out' | 'err') => {
    for (const which of first === 'err' ? (['err', 'out'] as const) : (['out', 'err'] as const)) {
      if (c.outgoing?.state !== 'open' || c.outgoing.window <= 0) return;
      const data = which === 'out' ? c._chunk : c._chunkErr;
      const cb = which === 'out' ? c._chunkcb : c._chunkcbErr;
      if (!data || !cb) continue;
      forget(which);
      c._waitWindow = false;
      (which === 'out' ? c._write : stderr._write)?.(data, null, cb);
    }
  };
  const forget = (which: 'out' | 'err') => {
    if (which === 'out') c._chunk = c._chunkcb = undefined;
    else c._chunkErr = c._chunkcbErr = undefined;
  };
  const wrap =
    (which: 'out' | 'err', write: RawWrite): RawWrite =>
    (data, encoding, cb) => {
      if (wrapped.has(cb)) return write(data, encoding, cb);
      const done: WriteCallback = (err) => {
        forget(which);
        cb(err);
        resume(which === 'out' ? 'err' : 'out');
      };
      wrapped.add(done);
      write(data, encoding, done);
    };
  c._write = wrap('out', writeOut);
  stderr._write = wrap('err', writeErr);
}

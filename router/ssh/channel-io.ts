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

import { YamuxError } from './errors.js';
import type { YamuxRole } from './options.js';
import type { YamuxStream } from './stream.js';

/**
 * The session's open streams and its accept backlog. The backlog holds inbound streams (already ACKed)
 * while no 'stream' listener is attached and hands them out in order once one is; a SYN that finds it
 * holding `acceptBacklog` streams is refused, as hashicorp's Accept queue does. So `session.once('stream')`
 * with backlog 1 behaves like Gitaly's server: one stream taken, the next held, the one after reset.
 */
export class StreamTable {
  private readonly streams = new Map<number, YamuxStream>();
  private held: YamuxStream[] = [];

  constructor(
    private readonly role: YamuxRole,
    private readonly acceptBacklog: number,
  ) {}

  get size(): number {
    return this.streams.size;
  }

  get(id: number): YamuxStream | undefined {
    return this.streams.get(id);
  }

  add(stream: YamuxStream): void {
    this.streams.set(stream.id, stream);
  }

  /**
   * Throws YAMUX_PROTOCOL for an id the peer may not use; returns false when the stream must be refused
   * because it would have to wait in a full backlog.
   */
  admit(id: number, listening: boolean): boolean {
    const peerParity = this.role === 'client' ? 0 : 1;
    if (id === 0 || id % 2 !== peerParity) {
      throw new YamuxError(
        'YAMUX_PROTOCOL',
        `SYN for stream ${id}: wrong id parity for a ${this.role}'s peer`,
      );
    }
    if (this.streams.has(id)) throw new YamuxError('YAMUX_PROTOCOL', `duplicate SYN for stream ${id}`);
    const mustWait = !listening || this.held.length > 0;
    return !(mustWait && this.held.length >= this.acceptBacklog);
  }

  hold(stream: YamuxStream): void {
    this.add(stream);
    this.held.push(stream);
  }

  /** The next held stream still worth handing out, if any. */
  nextHeld(): YamuxStream | undefined {
    let stream = this.held.shift();
    while (stream?.destroyed) stream = this.held.shift();
    return stream;
  }

  remove(stream: YamuxStream): void {
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id);
    const at = this.held.indexOf(stream);
    if (at >= 0) this.held.splice(at, 1);
  }

  /** Empties the table; `neverSeen` are the streams the application was never given. */
  clear(): { streams: YamuxStream[]; neverSeen: Set<YamuxStream> } {
    const result = { streams: [...this.streams.values()], neverSeen: new Set(this.held) };
    this.streams.clear();
    this.held = [];
    return result;
  }
}

import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FrameDecoder } from './decoder.js';
import { isProtocolFault, YamuxError } from './errors.js';
import { Flag, type FrameHeader, FrameType, GoAwayCode, HEADER_SIZE } from './frame.js';
import { type ResolvedOptions, resolveOptions, type YamuxOptions, type YamuxRole } from './options.js';
import { Pinger } from './pinger.js';
import { type StreamLink, YamuxStream } from './stream.js';
import { StreamTable } from './table.js';
import { emptyStats, type YamuxSessionEvents, type YamuxStats } from './types.js';
import { FrameWriter } from './writer.js';
import { paceYoungGc } from './young-gc.js';

const MAX_STREAM_ID = 0xffffffff;
/** After we end the socket, how long the peer gets to close its side before we destroy it. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * A yamux session over any Duplex (hashicorp/yamux semantics, tolerant of libp2p go-yamux). The socket is
 * read continuously and never paused: Gitaly fails a write that cannot reach the socket within 10 s, so
 * backpressure comes only from stream windows.
 */
export class YamuxSession extends EventEmitter<YamuxSessionEvents> {
  readonly role: YamuxRole;
  private readonly opts: ResolvedOptions;
  private readonly counters: YamuxStats = emptyStats();
  private readonly socket: Duplex;
  private readonly writer: FrameWriter;
  private readonly decoder: FrameDecoder;
  private readonly pinger: Pinger;
  private readonly link: StreamLink;
  private readonly table: StreamTable;
  private nextId: number;
  private isClosed = false;
  private localGoAway = false;
  private remoteGoAway = false;
  /** Where the Data payload being decoded goes (undefined: discard it), and its FIN/RST for after it. */
  private dataStream: YamuxStream | undefined;
  private dataFlags = 0;
  private inbox: Buffer[] | undefined;

  constructor(socket: Duplex, options: YamuxOptions) {
    super();
    this.opts = resolveOptions(options);
    this.role = this.opts.role;
    this.nextId = this.role === 'client' ? 1 : 2;
    this.socket = socket;
    this.table = new StreamTable(this.role, this.opts.acceptBacklog);
    this.writer = new FrameWriter(socket, this.counters, this.opts.onFrame);
    this.decoder = new FrameDecoder(
      { header: (h) => this.onHeader(h), data: (_id, chunk, last) => this.onData(chunk, last) },
      { maxDataLength: (id) => this.table.get(id)?.receiveWindow ?? MAX_STREAM_ID },
    );
    this.pinger = new Pinger((value) => this.writer.send(FrameType.Ping, Flag.SYN, 0, value));
    this.link = this.makeLink();
    // The typed event map hides EventEmitter's own events, hence the widening.
    (this as EventEmitter).on('newListener', (event: string | symbol) => {
      if (event === 'stream') process.nextTick(() => this.deliverHeld());
    });
    this.watchSocket();
    this.pinger.keepAlive(this.opts.keepAliveIntervalMs, this.opts.keepAliveTimeoutMs, (err) =>
      this.end(err),
    );
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Open streams, including inbound ones still in the accept backlog. */
  get streamCount(): number {
    return this.table.size;
  }

  get stats(): YamuxStats {
    return { ...this.counters };
  }

  /** Sends WindowUpdate+SYN at once; data may be written before the peer's ACK arrives. */
  open(): YamuxStream {
    if (this.remoteGoAway) throw new YamuxError('YAMUX_GO_AWAY', 'the peer sent GoAway: no new streams');
    if (this.isClosed) throw new YamuxError('YAMUX_SESSION_CLOSED', 'the session is closed');
    if (this.nextId > MAX_STREAM_ID) throw new YamuxError('YAMUX_STREAMS_EXHAUSTED', 'no stream ids left');
    const id = this.nextId;
    this.nextId += 2;
    const stream = new YamuxStream(this, this.link, id);
    this.table.add(stream);
    this.counters.streamsOpened += 1;
    stream.sendWindowUpdate(Flag.SYN);
    stream.startOpenTimer(this.opts.streamOpenTimeoutMs, () => {
      const ms = this.opts.streamOpenTimeoutMs;
      this.end(new YamuxError('YAMUX_OPEN_TIMEOUT', `stream ${id} was not acknowledged within ${ms} ms`));
    });
    return stream;
  }

  /** Refuses new inbound streams from now on; existing ones go on, and the session ends when they are done. */
  goAway(code: number = GoAwayCode.normal): void {
    if (this.isClosed) return;
    this.localGoAway = true;
    this.writer.send(FrameType.GoAway, 0, 0, code);
    this.maybeCloseDrained();
  }

  /** Ends the session without GoAway (as hashicorp's Close does): streams are destroyed, the socket ended. */
  close(): void {
    this.end(undefined);
  }

  /** Like close(), but the socket is destroyed at once instead of being flushed and ended. */
  destroy(err?: Error): void {
    this.end(err, true);
  }

  /** Resolves with the round trip in ms; rejects when the session ends first or `timeoutMs` passes. */
  ping(timeoutMs = 0): Promise<number> {
    if (this.isClosed) return Promise.reject(new YamuxError('YAMUX_SESSION_CLOSED', 'the session is closed'));
    return this.pinger.ping(timeoutMs);
  }

  private makeLink(): StreamLink {
    return {
      maxWindow: this.opts.maxStreamWindow,
      maxFrameData: this.opts.maxFrameData,
      closeTimeoutMs: this.opts.streamCloseTimeoutMs,
      isOpen: () => !this.isClosed,
      send: (type, flags, id, length, payload) => {
        if (type === FrameType.Data) this.paceGc(length);
        this.writer.send(type, flags, id, length, payload);
      },
      cork: () => this.writer.cork(),
      uncork: () => this.writer.uncork(),
      whenWritable: (cb) => this.writer.whenWritable(cb),
      release: (stream) => this.release(stream),
    };
  }

  private watchSocket(): void {
    const socket = this.socket;
    socket.on('data', (chunk: Buffer) => this.onSocketData(chunk));
    socket.on('end', () => this.end(new YamuxError('YAMUX_SESSION_CLOSED', 'the peer ended the socket')));
    socket.on('close', () => this.end(new YamuxError('YAMUX_SESSION_CLOSED', 'the socket closed')));
    socket.on('error', (err: Error) => {
      this.end(new YamuxError('YAMUX_SESSION_CLOSED', `socket error: ${err.message}`, { cause: err }));
    });
    // A caller that peeked at the socket (the `backchannel` magic) may have left it paused.
    socket.resume();
    // Window updates and HTTP/2 acks are small frames that gate the peer; Nagle plus delayed ACKs would hold
    // each one ~40 ms. Go (hashicorp, libp2p) sets TCP_NODELAY on every connection too.
    (socket as Partial<Pick<Socket, 'setNoDelay'>>).setNoDelay?.(true);
  }

  /**
   * After the session ends the socket is still drained, so the peer's last writes never block. A Duplex that
   * delivers synchronously could hand us data while we are still decoding (our write made the peer answer
   * at once), so such chunks wait in `inbox` instead of re-entering the decoder.
   */
  private onSocketData(chunk: Buffer): void {
    if (this.isClosed) return;
    this.paceGc(chunk.length);
    if (this.inbox !== undefined) {
      this.inbox.push(chunk);
      return;
    }
    const inbox = [chunk];
    this.inbox = inbox;
    try {
      for (let i = 0; i < inbox.length && !this.isClosed; i += 1) this.decoder.push(inbox[i]!);
    } catch (err) {
      this.fail(err);
    } finally {
      this.inbox = undefined;
    }
  }

  private paceGc(bytes: number): void {
    if (this.opts.youngGcEveryBytes > 0) paceYoungGc(bytes, this.opts.youngGcEveryBytes);
  }

  /** Protocol faults get GoAway(protocol error), anything else (a throwing listener) GoAway(internal). */
  private fail(err: unknown): void {
    if (this.isClosed) return;
    const code = isProtocolFault(err) ? GoAwayCode.protocolError : GoAwayCode.internalError;
    this.writer.send(FrameType.GoAway, 0, 0, code);
    this.end(err instanceof Error ? err : new YamuxError('YAMUX_PROTOCOL', String(err)));
  }

  private onHeader(h: FrameHeader): void {
    this.counters.framesIn += 1;
    this.counters.bytesIn += HEADER_SIZE;
    this.opts.onFrame?.('in', h);
    if (this.isClosed) return;
    switch (h.type) {
      case FrameType.Data:
      case FrameType.WindowUpdate:
        this.onStreamHeader(h);
        return;
      case FrameType.Ping:
        if ((h.flags & Flag.SYN) !== 0) this.writer.send(FrameType.Ping, Flag.ACK, 0, h.length);
        else if ((h.flags & Flag.ACK) !== 0) this.pinger.onAck(h.length);
        return;
      case FrameType.GoAway:
        this.onGoAway(h.length);
        return;
    }
  }

  /** FIN and RST riding on a Data frame take effect after its payload, so no data is lost before 'end'. */
  private onStreamHeader(h: FrameHeader): void {
    const carriesData = h.type === FrameType.Data && h.length > 0;
    let stream = this.table.get(h.streamId);
    if ((h.flags & Flag.SYN) !== 0) stream = this.acceptIncoming(h.streamId);
    this.dataStream = carriesData ? stream : undefined;
    this.dataFlags = carriesData ? h.flags : 0;
    // Frames for streams we do not know (closed, reset, refused) are dropped; their data is discarded.
    if (stream === undefined) return;
    if ((h.flags & Flag.ACK) !== 0) stream.onAck();
    if (h.type === FrameType.WindowUpdate && h.length > 0) stream.onWindowUpdate(h.length);
    if (!carriesData) applyCloseFlags(stream, h.flags);
  }

  private onData(chunk: Buffer, last: boolean): void {
    this.counters.bytesIn += chunk.length;
    const stream = this.dataStream;
    if (stream === undefined || this.isClosed) return;
    stream.onData(chunk);
    if (!last) return;
    this.dataStream = undefined;
    applyCloseFlags(stream, this.dataFlags);
  }

  /** Returns undefined when the stream was refused (RST sent). */
  private acceptIncoming(id: number): YamuxStream | undefined {
    if (!this.table.admit(id, this.listenerCount('stream') > 0) || this.localGoAway) {
      this.writer.send(FrameType.WindowUpdate, Flag.RST, id, 0);
      return undefined;
    }
    const stream = new YamuxStream(this, this.link, id);
    this.table.hold(stream);
    this.counters.streamsAccepted += 1;
    // ACK at once: hashicorp peers destroy the whole session when a stream they opened stays un-ACKed.
    stream.sendWindowUpdate(Flag.ACK);
    this.deliverHeld();
    return stream;
  }

  private deliverHeld(): void {
    while (this.listenerCount('stream') > 0 && !this.isClosed) {
      const stream = this.table.nextHeld();
      if (stream === undefined) return;
      this.emit('stream', stream);
    }
  }

  /** hashicorp ends the session on an error GoAway; a normal one only stops new streams. */
  private onGoAway(code: number): void {
    this.remoteGoAway = true;
    this.emit('goaway', code);
    if (code !== GoAwayCode.normal) {
      this.end(new YamuxError('YAMUX_GO_AWAY', `the peer sent GoAway with code ${code}`));
      return;
    }
    this.maybeCloseDrained();
  }

  private release(stream: YamuxStream): void {
    this.table.remove(stream);
    this.maybeCloseDrained();
  }

  /** After GoAway (either way) no stream can start, so once none is left the session has nothing to do. */
  private maybeCloseDrained(): void {
    if (this.isClosed || !(this.localGoAway || this.remoteGoAway) || this.table.size > 0) return;
    process.nextTick(() => {
      if (this.table.size === 0) this.end(undefined);
    });
  }

  private end(err: Error | undefined, hard = false): void {
    if (this.isClosed) return;
    this.isClosed = true;
    const detail = err ? `: ${err.message}` : '';
    const streamErr = new YamuxError('YAMUX_SESSION_CLOSED', `session closed${detail}`, { cause: err });
    this.pinger.rejectAll(streamErr);
    const { streams, neverSeen } = this.table.clear();
    // Streams the application never received get no error: nobody could be listening for it.
    for (const stream of streams) stream.onSessionEnd(neverSeen.has(stream) ? undefined : streamErr);
    if (hard) this.socket.destroy();
    else this.writer.shutdown(SHUTDOWN_GRACE_MS);
    process.nextTick(() => this.emit('close', err));
  }
}

function applyCloseFlags(stream: YamuxStream, flags: number): void {
  if ((flags & Flag.RST) !== 0) stream.onReset();
  else if ((flags & Flag.FIN) !== 0) stream.onFin();
}

import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type Http2ServerRequest, type Http2ServerResponse, constants as h2 } from 'node:http2';
import type { Readable, Writable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { closeLingering, lingerInsteadOfDestroySoon } from '../lib/lingering-close.js';

export type ServerRequest = IncomingMessage | Http2ServerRequest;
export type ServerReply = ServerResponse | Http2ServerResponse;

/** What both `ServerResponse` and `Http2ServerResponse` offer (the latter's `flushHeaders` is untyped). */
interface Reply extends Writable {
  readonly headersSent: boolean;
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  flushHeaders(): void;
}

/**
 * Response bytes queued (not yet taken by the connection or, for HTTP/2, by the peer's window) before
 * `writeAll` asks the tunnel to wait. Node's own high-water mark (16 KiB) is below one 64 KiB socket
 * read of git output, which would pause and resume Gitaly's stream after nearly every batch. Measured
 * on HTTP/2 (bridge CPU s/GiB): 64 KiB 1.35, 128 KiB 1.31, 256 KiB 1.23, 1 MiB 1.16; 256 KiB keeps
 * what a tunnel to a slow client holds near the yamux window.
 */
export const RESPONSE_BUFFER_BYTES = 256 * 1024;

const CRLF = Buffer.from('\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

/** After the response, an HTTP/1.1 connection whose request body is still open lingers this long, then closes. */

/**
 * One request/response pair of either protocol, with the few operations a tunnel needs. It hides
 * the HTTP/1.1 vs HTTP/2 differences: how to end an exchange whose request body is still open
 * (HTTP/1.1: close the connection after the response; HTTP/2: RST_STREAM NO_ERROR after it) and
 * how to tell that the client went away.
 */
export class Exchange {
  readonly protocol: 'h1' | 'h2';
  private finished = false;
  private gone = false;
  /** HTTP/1.1 chunked body framed by `writeAll` rather than by Node (see `begin`). */
  private ownChunks = false;
  private readonly res: Reply;

  /**
   * Emits 'finish' when the response has been handed over completely and 'close' when the
   * exchange is over. For HTTP/2 that is the stream itself: the compatibility response emits
   * 'finish' only together with 'close', even when the client reset the stream.
   */
  private readonly lifecycle: Writable;

  constructor(
    readonly req: ServerRequest,
    reply: ServerReply,
  ) {
    const res = reply as unknown as Reply;
    this.res = res;
    this.protocol = req.httpVersionMajor === 2 ? 'h2' : 'h1';
    this.lifecycle = this.protocol === 'h2' ? (reply as Http2ServerResponse).stream : res;
    const goneNow = () => {
      if (!this.finished) this.gone = true;
    };
    this.lifecycle.once('finish', () => {
      // An HTTP/2 stream reset by the client also ends in 'finish', after 'aborted'.
      if (!this.gone) this.finished = true;
    });
    // HTTP/2: reset by the client (the compatibility request even reports a clean 'end' first).
    this.lifecycle.once('aborted', goneNow);
    this.lifecycle.once('close', goneNow);
  }

  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }

  get url(): string {
    return this.req.url ?? '/';
  }

  get body(): Readable {
    return this.req;
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  /** Aborts the response (HTTP/1.1: the connection; HTTP/2: the stream). */
  destroy(): void {
    this.res.destroy();
  }

  get clientGone(): boolean {
    return this.gone;
  }

  get remoteAddress(): string | undefined {
    return this.req.socket?.remoteAddress;
  }

  get encrypted(): boolean {
    return (this.req.socket as TLSSocket | undefined)?.encrypted === true;
  }

  /** Runs `fn` once if the client goes away before the response is complete. */
  onClientGone(fn: () => void): void {
    if (this.gone) {
      fn();
      return;
    }
    let called = false;
    const check = () => {
      if (this.gone && !called) {
        called = true;
        fn();
      }
    };
    this.lifecycle.once('aborted', check);
    this.lifecycle.once('close', check);
  }

  /** Runs `fn` once the response has been fully handed to the connection, or the client is gone. */
  onDone(fn: () => void): void {
    if (this.finished || this.gone) {
      fn();
      return;
    }
    let called = false;
    const once = () => {
      if (!called) {
        called = true;
        fn();
      }
    };
    this.lifecycle.once('finish', once);
    this.lifecycle.once('close', once);
  }

  /**
   * A complete response that does not read the request body: HTTP/1.1 closes the connection
   * afterwards, HTTP/2 resets the stream if the client has not finished its body.
   */
  reject(status: number, headers: OutgoingHttpHeaders, body: Buffer | string): void {
    if (this.gone || this.res.headersSent) return;
    const payload = typeof body === 'string' ? Buffer.from(body) : body;
    const out: OutgoingHttpHeaders = { ...headers, 'content-length': String(payload.length) };
    if (this.protocol === 'h1') {
      out.connection = 'close';
      lingerInsteadOfDestroySoon(this.req.socket);
    }
    this.res.writeHead(status, out);
    this.res.end(payload);
    this.closeBodyAfterResponse();
  }

  /** A complete small response for a request the server reads itself; the connection stays open. */
  send(status: number, headers: OutgoingHttpHeaders, body: Buffer | string): void {
    if (this.gone || this.res.headersSent) return;
    const payload = typeof body === 'string' ? Buffer.from(body) : body;
    this.res.writeHead(status, { ...headers, 'content-length': String(payload.length) });
    this.res.end(payload);
  }

  /** Sends the status line and headers now (no body yet). */
  begin(status: number, headers: OutgoingHttpHeaders): void {
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
    const h1 = this.res as unknown as ServerResponse;
    if (this.protocol === 'h1' && h1.chunkedEncoding) {
      // Node frames every write() as its own chunk; a batch of frame headers and pieces would
      // become many tiny chunks (and a 'data' event each for the client), so the chunk framing of
      // this body is written here instead: one chunk per writeAll.
      h1.chunkedEncoding = false;
      this.ownChunks = true;
    }
  }

  /** Writes one chunk; false means wait for `onDrain` (Node's high-water mark). */
  write(chunk: Buffer): boolean {
    if (this.gone || this.res.writableEnded) return true;
    if (!this.ownChunks) return this.res.write(chunk);
    this.writeAll([chunk]);
    return !this.res.writableNeedDrain;
  }

  /**
   * Writes `chunks` corked, as one vectored write (HTTP/1.1: one chunk; HTTP/2: one write to the
   * stream); false means wait for `onDrain`: RESPONSE_BUFFER_BYTES are queued (by then a write has
   * seen Node's smaller high-water mark, so 'drain' is due).
   */
  writeAll(chunks: readonly Buffer[]): boolean {
    if (this.gone || this.res.writableEnded) return true;
    let length = 0;
    for (const chunk of chunks) length += chunk.length;
    if (length === 0) return this.res.writableLength < RESPONSE_BUFFER_BYTES;
    this.res.cork();
    if (this.ownChunks) this.res.write(`${length.toString(16)}\r\n`, 'latin1');
    for (const chunk of chunks) if (chunk.length > 0) this.res.write(chunk);
    if (this.ownChunks) this.res.write(CRLF);
    this.res.uncork();
    return this.res.writableLength < RESPONSE_BUFFER_BYTES;
  }

  onDrain(fn: () => void): void {
    this.res.once('drain', fn);
  }

  removeDrain(fn: () => void): void {
    this.res.removeListener('drain', fn);
  }

  /** Ends the response; if the request body is still open, the exchange is closed after it. */
  end(chunks: Buffer[] = []): void {
    if (this.gone || this.res.writableEnded) return;
    // A `Connection: close` client (gitlab-shell, the router) still sending its body: Node would
    // destroy the socket once the FIN is out, a reset that can take the response's end with it.
    if (this.protocol === 'h1' && !this.req.complete) lingerInsteadOfDestroySoon(this.req.socket);
    if (this.ownChunks) {
      this.writeAll(chunks);
      this.res.end(LAST_CHUNK);
    } else {
      for (const chunk of chunks) this.res.write(chunk);
      this.res.end();
    }
    this.closeBodyAfterResponse();
  }

  private closeBodyAfterResponse(): void {
    this.onDone(() => {
      if (this.req.complete || this.gone) return;
      if (this.protocol === 'h2') {
        // RST_STREAM NO_ERROR: "stop sending, the response is complete" (RFC 9113 §8.1).
        const stream = (this.res as unknown as Http2ServerResponse).stream;
        if (!stream.closed && !stream.destroyed) stream.close(h2.NGHTTP2_NO_ERROR);
        return;
      }
      // HTTP/1.1: discard what still arrives so closing does not turn into a reset that
      // could destroy the response in flight, then close the connection.
      this.req.unpipe();
      this.req.removeAllListeners('data');
      this.req.resume();
      closeLingering(this.req.socket);
    });
  }
}

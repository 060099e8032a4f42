import type { IncomingHttpHeaders } from 'node:http';
import http2 from 'node:http2';
import type { Readable, Writable } from 'node:stream';
import http2wrapper from 'http2-wrapper';
import { endToEndHeaders } from '../../lib/http-headers.js';
import { Http1Transport } from './http1-transport.js';
import { joinPath } from './upstream-path.js';

/**
 * HTTP client for one cell's bridge. `http://` cells are spoken to with HTTP/1.1 (`protocol:
 * "http1"`, the default, as gitlab-shell: `http1-transport.ts`, one connection per request) or
 * cleartext HTTP/2 with prior knowledge (`"h2c"`, one session, reused until it closes); `https://`
 * cells go through http2-wrapper (ALPN, HTTP/2 with an HTTP/1.1 fallback) whatever `protocol` says.
 * All give the same call shape: a writable request body, a promise of the response head, and
 * `cancel()` (RST_STREAM CANCEL on HTTP/2, the connection destroyed on HTTP/1.1).
 */
/** How an `http://` cell is spoken to. */
export type CellProtocol = 'http1' | 'h2c';

export interface UpstreamRequest {
  method: string;
  /** Path and query, relative to the cell URL's own path prefix. */
  path: string;
  headers: Record<string, string>;
  /** false: headers only (GET, or a body given to `end()` at once). */
  streamBody: boolean;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

export interface UpstreamCall {
  /** The request body; already ended when `streamBody` was false. */
  body: Writable;
  response: Promise<UpstreamResponse>;
  cancel(): void;
}

export interface CellTransport {
  open(req: UpstreamRequest): Promise<UpstreamCall>;
  close(): Promise<void>;
}

/** Stream window per HTTP/2 stream and for the whole session (Node's default is 64 KiB). */
const STREAM_WINDOW = 1 << 20;
const SESSION_WINDOW = 16 << 20;

/** `host` travels as `:authority` on HTTP/2. */
const NOT_SENT = new Set(['host']);

/**
 * Drops what HTTP/2 forbids (connection-specific headers, RFC 9113 §8.2.2, with `lib/http-headers.ts`'s
 * hop-by-hop list and the headers `Connection` names) and pseudo-headers.
 */
export function h2SafeHeaders(headers: Record<string, string>): Record<string, string> {
  return endToEndHeaders(headers, NOT_SENT);
}

function ignore(): void {}

class H2cTransport implements CellTransport {
  private session: http2.ClientHttp2Session | undefined;
  private readonly prefix: string;

  constructor(private readonly url: URL) {
    this.prefix = url.pathname;
  }

  private getSession(): http2.ClientHttp2Session {
    const current = this.session;
    if (current && !current.closed && !current.destroyed) return current;
    const session = http2.connect(this.url.origin, { settings: { initialWindowSize: STREAM_WINDOW } });
    session.on('connect', () => session.setLocalWindowSize(SESSION_WINDOW));
    const forget = () => {
      if (this.session === session) this.session = undefined;
    };
    session.on('close', forget);
    session.on('goaway', forget);
    // Errors surface on the streams; an unhandled 'error' would crash the process.
    session.on('error', forget);
    this.session = session;
    return session;
  }

  async open(req: UpstreamRequest): Promise<UpstreamCall> {
    const stream = this.getSession().request(
      {
        ...h2SafeHeaders(req.headers),
        ':method': req.method,
        ':path': joinPath(this.prefix, req.path),
      },
      { endStream: !req.streamBody },
    );
    // Readers of the body see failures as 'close' without 'end'; never crash on a reset stream.
    stream.on('error', ignore);
    const response = new Promise<UpstreamResponse>((resolve, reject) => {
      const onClose = () => reject(new Error(`stream closed before a response (code ${stream.rstCode})`));
      stream.once('error', reject);
      stream.once('close', onClose);
      stream.once('response', (headers) => {
        stream.off('error', reject);
        stream.off('close', onClose);
        resolve({ status: Number(headers[':status']), headers, body: stream });
      });
    });
    // Body errors after the response started are seen by whoever reads the body.
    response.catch(() => undefined);
    return {
      body: stream,
      response,
      cancel: () => {
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session || session.closed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => session.destroy(), 1000);
      session.close(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

export interface TlsOptions {
  /** Extra CA certificates (tests, private PKI); the system store is used otherwise. */
  ca?: string | Buffer;
}

class AutoTransport implements CellTransport {
  private readonly agent = new http2wrapper.Agent();

  constructor(
    private readonly url: URL,
    private readonly tls: TlsOptions,
  ) {}

  async open(req: UpstreamRequest): Promise<UpstreamCall> {
    const target = new URL(joinPath(this.url.pathname, req.path), this.url.origin);
    const request = await http2wrapper.auto(target, {
      method: req.method,
      headers: h2SafeHeaders(req.headers),
      agent: { http2: this.agent },
      ...(this.tls.ca ? { ca: this.tls.ca } : {}),
    });
    request.on('error', ignore);
    const response = new Promise<UpstreamResponse>((resolve, reject) => {
      request.once('error', reject);
      request.once('response', (res) => {
        request.off('error', reject);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
    });
    response.catch(() => undefined);
    if (req.streamBody) request.flushHeaders();
    else request.end();
    return {
      body: request,
      response,
      cancel: () => {
        request.destroy();
      },
    };
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

export function createCellTransport(
  url: string,
  tls: TlsOptions = {},
  protocol: CellProtocol = 'http1',
): CellTransport {
  const u = new URL(url);
  if (u.protocol === 'https:') return new AutoTransport(u, tls);
  return protocol === 'h2c' ? new H2cTransport(u) : new Http1Transport(u);
}

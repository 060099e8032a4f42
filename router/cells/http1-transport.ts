/**
 * @file HTTP/1.1 to a cell's bridge, as gitlab-shell reaches `http://` cells (Go's `net/http`: no
 * h2c, `Connection: close` on every request, a streamed body of unknown length sent chunked). One
 * TCP connection per request: the agent keeps nothing alive, so a tunnel owns its connection and
 * `cancel()` (destroying it) is what the bridge sees as the client gone.
 *
 * Full duplex: the head is flushed at once, the body is written while the response streams. When
 * the response ends first, Node's client ends the socket (`destroySoon`); later body writes fail
 * on the request, whose errors are swallowed here (the reader of the response already has it all).
 * Backpressure: `body.write()` returns false once the socket holds its high-water mark (the
 * caller waits for `drain`); a paused response stops reading the socket, so the bridge's writes
 * block in the kernel, not in our heap.
 */
import http from 'node:http';
import { endToEndHeaders } from '../../lib/http-headers.js';
import type { CellTransport, UpstreamCall, UpstreamRequest, UpstreamResponse } from './transport.js';
import { joinPath } from './upstream-path.js';

/** Node writes the cell's own `Host`; the caller's `host` is not ours to send. */
const NOT_SENT = new Set(['host']);

function ignore(): void {}

export class Http1Transport implements CellTransport {
  private readonly agent = new http.Agent({ keepAlive: false });
  private readonly host: string;
  private readonly port: number;

  constructor(private readonly url: URL) {
    this.host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = Number(url.port || 80);
  }

  async open(req: UpstreamRequest): Promise<UpstreamCall> {
    const request = http.request({
      agent: this.agent,
      host: this.host,
      port: this.port,
      method: req.method,
      path: joinPath(this.url.pathname, req.path),
      headers: { ...endToEndHeaders(req.headers, NOT_SENT), connection: 'close' },
    });
    // Pkt-lines of a negotiation are small: no Nagle delay on them.
    request.once('socket', (socket) => socket.setNoDelay(true));
    // Failures reach the response promise or the response's reader; never crash on a late one.
    request.on('error', ignore);
    const response = new Promise<UpstreamResponse>((resolve, reject) => {
      const onClose = () => reject(new Error('connection closed before a response'));
      request.once('error', reject);
      request.once('close', onClose);
      request.once('response', (res) => {
        request.off('error', reject);
        request.off('close', onClose);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
    });
    response.catch(ignore);
    if (req.streamBody) request.flushHeaders();
    else request.end();
    return {
      body: request,
      response,
      cancel: () => {
        if (!request.destroyed) request.destroy();
      },
    };
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

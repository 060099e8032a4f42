import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { Socket } from 'node:net';

export type Protocol = 'h1' | 'h2';

/** A streaming POST whose body stays open until `end()`; the response is collected as it arrives. */
export interface TunnelClient {
  status: Promise<number>;
  headers: Promise<IncomingHttpHeaders>;
  write(data: Buffer | string): void;
  end(data?: Buffer | string): void;
  /** The client goes away: HTTP/1.1 destroys the socket, HTTP/2 resets the stream (CANCEL). */
  abort(): void;
  received(): Buffer;
  /** Stop / restart reading the response (flow control towards the bridge). */
  pause(): void;
  resume(): void;
  /** Resolves with everything received once `pred` holds; rejects after `timeoutMs`. */
  waitFor(pred: (body: Buffer) => boolean, timeoutMs?: number): Promise<Buffer>;
  /** Response fully received (true) or cut off (false). */
  done: Promise<boolean>;
  /** The HTTP/1.1 connection or the HTTP/2 stream is closed. */
  closed: Promise<void>;
  close(): void;
}

export function openTunnel(
  protocol: Protocol,
  baseUrl: string,
  path: string,
  headers: OutgoingHttpHeaders,
  opts: { ca?: Buffer } = {},
): TunnelClient {
  const chunks: Buffer[] = [];
  const waiters = new Set<() => void>();
  const onChunk = (c: Buffer) => {
    chunks.push(c);
    for (const w of waiters) w();
  };
  let finished = false;
  const onFinish = () => {
    finished = true;
    for (const w of waiters) w();
  };
  const received = () => {
    if (chunks.length > 1) chunks.splice(0, chunks.length, Buffer.concat(chunks));
    return chunks[0] ?? Buffer.alloc(0);
  };
  const waitFor = (pred: (b: Buffer) => boolean, timeoutMs = 5000) =>
    new Promise<Buffer>((resolve, reject) => {
      const check = () => {
        const body = received();
        if (pred(body)) {
          cleanup();
          resolve(body);
        } else if (finished) {
          cleanup();
          reject(
            new Error(
              `response ended before the condition held; got ${JSON.stringify(body.toString('latin1'))}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out; got ${JSON.stringify(received().toString('latin1'))}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  if (protocol === 'h1') {
    const url = new URL(path, baseUrl);
    // A keep-alive agent, as a router would use: the server, not the client, decides to close.
    const mod = url.protocol === 'https:' ? https : http;
    const agent = new mod.Agent({ keepAlive: true, maxSockets: 1, ca: opts.ca });
    const req = mod.request(url, {
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      agent,
    });
    req.on('error', () => {});
    req.flushHeaders();
    let socket: Socket | undefined;
    const closed = new Promise<void>((resolve) => {
      req.on('socket', (s) => {
        socket = s;
        s.once('close', () => resolve());
      });
    });
    closed.then(() => agent.destroy());
    const response = new Promise<http.IncomingMessage>((resolve) => req.on('response', resolve));
    const done = new Promise<boolean>((resolve) => {
      response.then((res) => {
        res.on('data', onChunk);
        res.on('end', () => {
          onFinish();
          resolve(true);
        });
        res.on('error', () => {});
        res.on('close', () => {
          onFinish();
          resolve(res.complete);
        });
      });
      req.on('close', () => {
        onFinish();
        resolve(false);
      });
    });
    return {
      status: response.then((r) => r.statusCode ?? 0),
      headers: response.then((r) => r.headers),
      write: (d) => void req.write(d),
      end: (d) => void (d === undefined ? req.end() : req.end(d)),
      abort: () => (socket ? socket.destroy() : req.destroy()),
      received,
      pause: () => void response.then((r) => r.pause()),
      resume: () => void response.then((r) => r.resume()),
      waitFor,
      done,
      closed,
      close: () => {
        req.destroy();
        agent.destroy();
      },
    };
  }

  const session = http2.connect(baseUrl, opts.ca ? { ca: opts.ca } : {});
  session.on('error', () => {});
  const stream = session.request({ ':method': 'POST', ':path': path, ...headers }, { endStream: false });
  stream.on('error', () => {});
  const response = new Promise<http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader>((resolve) =>
    stream.once('response', resolve),
  );
  stream.on('data', onChunk);
  const done = new Promise<boolean>((resolve) => {
    stream.on('end', () => {
      onFinish();
      resolve(true);
    });
    stream.on('close', () => {
      onFinish();
      resolve(false);
    });
  });
  const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
  closed.then(() => session.close());
  return {
    status: response.then((h) => Number(h[':status'])),
    headers: response as Promise<IncomingHttpHeaders>,
    write: (d) => void stream.write(d),
    end: (d) => void (d === undefined ? stream.end() : stream.end(d)),
    abort: () => stream.close(http2.constants.NGHTTP2_CANCEL),
    received,
    pause: () => stream.pause(),
    resume: () => stream.resume(),
    waitFor,
    done,
    closed,
    close: () => {
      stream.destroy();
      session.destroy();
    },
  };
}

export interface SimpleResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One buffered request over HTTP/1.1 or HTTP/2 (prior knowledge, or TLS with `ca`). */
export function simpleRequest(
  protocol: Protocol,
  baseUrl: string,
  opts: { method?: string; path: string; headers?: OutgoingHttpHeaders; body?: Buffer | string; ca?: Buffer },
): Promise<SimpleResponse> {
  const method = opts.method ?? 'GET';
  return new Promise((resolve, reject) => {
    const collect = (status: number, headers: IncomingHttpHeaders, stream: NodeJS.ReadableStream) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: Buffer) => parts.push(c));
      stream.on('end', () => resolve({ status, headers, body: Buffer.concat(parts) }));
      stream.on('error', reject);
    };
    if (protocol === 'h1') {
      const url = new URL(opts.path, baseUrl);
      const mod = url.protocol === 'https:' ? https : http;
      const req = mod.request(url, { method, headers: opts.headers, agent: false, ca: opts.ca }, (res) =>
        collect(res.statusCode ?? 0, res.headers, res),
      );
      req.on('error', reject);
      req.end(opts.body);
      return;
    }
    const session = http2.connect(baseUrl, opts.ca ? { ca: opts.ca } : {});
    session.on('error', reject);
    const stream = session.request({ ':method': method, ':path': opts.path, ...opts.headers });
    stream.on('response', (h) => {
      collect(Number(h[':status']), h as IncomingHttpHeaders, stream);
      stream.on('end', () => session.close());
    });
    stream.on('error', reject);
    stream.end(opts.body);
  });
}

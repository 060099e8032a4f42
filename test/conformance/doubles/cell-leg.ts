/**
 * @file The broken router double's man in the middle on the router → cell leg: one HTTP listener
 * per cell, on the cell's own loopback address and one port shared by every cell (the router's
 * `cellEndpointPort`), forwarding each request to the cell's real front door (`shellEndpoint`) and
 * streaming both ways. A breakage's hooks (`breakages.ts`) change what the router sends (another
 * cell, a header gone, a re-signed JWT), follow a 3xx as a broken router would, or change or hold
 * what it passes back. With no hooks it is a plain relay: the router behaves as without it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StackJson } from '../../../lib/contracts/stack.js';

/** One request as the router sent it, before the leg forwards it (hooks may change it). */
export interface LegRequest {
  /** The cell the router chose; a hook may name another. */
  cell: string;
  method: string;
  path: string;
  headers: http.OutgoingHttpHeaders;
}

/** An answer the leg sends instead of the cell's. */
export interface Replacement {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface CellLegHooks {
  /** Changes the request before it is sent. */
  request?(req: LegRequest, legacy: string): void | Promise<void>;
  /** A 3xx on an internal API call: ask its `Location` with the same method, headers and body. */
  followRedirects?: boolean;
  /** An answer to send instead of the cell's (its body read as text), or undefined to relay it. */
  replace?(req: LegRequest, status: number, body: () => Promise<string>): Promise<Replacement | undefined>;
  /** Which answers `replace` is asked about (it reads their body). */
  replaces?(req: LegRequest, status: number): boolean;
  /** Changes the answer's headers before they are relayed. */
  answerHeaders?(req: LegRequest, headers: http.OutgoingHttpHeaders): void;
  /** Milliseconds to hold the answer (headers and body) before relaying it; 0 or undefined: none. */
  holdAnswerMs?(req: LegRequest): number;
}

export interface CellLeg {
  /** The port every cell's listener has. */
  port: number;
  /** `http://<cell host>:<port>` by cell name. */
  urls: Record<string, string>;
  close(): Promise<void>;
}

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer']);

function withoutHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

const INTERNAL = '/api/v4/internal/';

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Sends `req` to `target` (a URL), the body streamed from `body` (or the bytes given). */
function send(
  target: URL,
  req: LegRequest,
  body: NodeJS.ReadableStream | Buffer,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const out = http.request(target, {
      method: req.method,
      headers: { ...req.headers, host: target.host },
      agent: false,
    });
    out.on('response', resolve);
    out.on('error', reject);
    if (Buffer.isBuffer(body)) out.end(body);
    else {
      // A tunnel's answer may start before its body (the advertisement): the headers go now.
      out.flushHeaders();
      body.pipe(out);
    }
  });
}

class Relay {
  constructor(
    private readonly upstream: Record<string, string>,
    private readonly legacy: string,
    private readonly hooks: CellLegHooks,
  ) {}

  async handle(cell: string, inbound: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const req: LegRequest = {
      cell,
      method: inbound.method ?? 'GET',
      path: inbound.url ?? '/',
      headers: withoutHop(inbound.headers),
    };
    await this.hooks.request?.(req, this.legacy);
    const base = this.upstream[req.cell];
    if (base === undefined) throw new Error(`no cell ${req.cell}`);
    const internal = req.path.startsWith(INTERNAL);
    // Internal API bodies are small JSON: kept, so a followed redirect can send them again.
    const body = internal ? await readAll(inbound) : inbound;
    let answer = await send(new URL(req.path, base), req, body);
    const location = answer.headers.location;
    if (this.hooks.followRedirects && internal && isRedirect(answer.statusCode) && location) {
      answer.resume();
      answer = await send(new URL(location, base), req, body);
    }
    await this.answer(req, answer, res);
  }

  private async answer(req: LegRequest, answer: http.IncomingMessage, res: http.ServerResponse) {
    const status = answer.statusCode ?? 502;
    if (this.hooks.replace && this.hooks.replaces?.(req, status)) {
      const text = () => readAll(answer).then((b) => b.toString('utf8'));
      const instead = await this.hooks.replace(req, status, text);
      if (instead) {
        answer.resume();
        res.writeHead(instead.status, instead.headers).end(instead.body);
        return;
      }
    }
    const hold = this.hooks.holdAnswerMs?.(req) ?? 0;
    if (hold > 0) await new Promise((resolve) => setTimeout(resolve, hold));
    const headers = withoutHop(answer.headers);
    this.hooks.answerHeaders?.(req, headers);
    res.writeHead(status, headers);
    res.flushHeaders();
    answer.pipe(res);
  }
}

const isRedirect = (status: number | undefined) => status !== undefined && status >= 300 && status < 400;

/**
 * Starts one listener per cell of the world, each on the host of the cell's `shellEndpoint`, all on
 * one port (tried until every host has it free).
 */
export async function startCellLeg(stack: StackJson, hooks: CellLegHooks): Promise<CellLeg> {
  const upstream = Object.fromEntries(stack.cells.map((c) => [c.name, c.shellEndpoint]));
  const legacy = stack.cells.find((c) => c.legacy)?.name ?? '';
  const relay = new Relay(upstream, legacy, hooks);
  for (let attempt = 0; attempt < 20; attempt++) {
    const servers: http.Server[] = [];
    try {
      let port = 0;
      for (const cell of stack.cells) {
        const server = http.createServer((inbound, res) => {
          relay.handle(cell.name, inbound, res).catch((err: Error) => {
            if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
            res.end(`cell leg: ${err.message}`);
          });
        });
        servers.push(server);
        port = await listen(server, new URL(cell.shellEndpoint).hostname, port);
      }
      const urls = Object.fromEntries(
        stack.cells.map((c) => [c.name, `http://${new URL(c.shellEndpoint).hostname}:${port}`]),
      );
      return { port, urls, close: () => closeAll(servers) };
    } catch (err) {
      await closeAll(servers);
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  throw new Error('no port free on every cell address');
}

function listen(server: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

async function closeAll(servers: http.Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          if (s.listening) s.close(() => resolve());
          else resolve();
        }),
    ),
  );
}

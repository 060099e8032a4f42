import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { encodeErrorFrame, encodeExitStatus, encodeFrame, ResponseFrame } from '../../lib/framing.js';
import { jwtKey, SHELL_HEADER, verifyShellJwt } from '../../lib/jwt.js';
import type { CellProtocol } from '../cells/transport.js';
import { gitEnv } from './git-repos.js';

/**
 * Test double for a cell's bridge as the router sees it: one server per cell over a shared, mutable
 * "world", speaking HTTP/1.1 (`http1`, the router's default) or cleartext HTTP/2 (`h2c`). It answers the internal API (`authorized_keys`, `discover`,
 * `cells/learn`, `allowed`) from small tables and serves the three tunnel endpoints by running REAL
 * `git upload-pack` / `receive-pack` / `upload-archive` on bare repositories, writing framed
 * responses (lib/framing.ts). Every request is recorded for assertions.
 */
export interface WorldUser {
  id: number;
  username: string;
}

export interface WorldKey {
  id: number;
  userId: number;
  /** Base64 of the public key blob (second field of an OpenSSH `.pub` line). */
  blob: string;
}

export interface WorldProject {
  /** `namespace/project` */
  path: string;
  cell: string;
  /** Absolute path of the bare repository. */
  repo: string;
}

export interface TunnelOverride {
  status?: number;
  headers?: Record<string, string>;
  /** Raw response body (for error statuses or hand-made frames). */
  body?: Buffer;
}

export interface World {
  secret: string;
  legacyCell: string;
  users: WorldUser[];
  keys: WorldKey[];
  projects: WorldProject[];
  /** Seconds learned routes may be cached. */
  learnTtl: number;
  /** Makes every learn call fail with 500. */
  learnFails: boolean;
  /** A canned learn answer for a path (checked first); undefined = the table-driven answer. */
  learnHook: ((pathInfo: string) => Record<string, unknown> | undefined) | undefined;
  /** Page paths every cell answers `404` (for the HTTP front's 404 delay). */
  notFoundPages: Set<string>;
  /** `${username} ${action} ${project}` → denial message. */
  denials: Map<string, string>;
  consoleMessages: string[];
  /** Cells that answer in Workhorse's compatible mode (no response framing). */
  unframedCells: Set<string>;
  /**
   * Project path → hook run on each tunnel request for it: a canned answer instead of running git,
   * or undefined to run git. It may change the world (e.g. move the project) before answering.
   */
  tunnelOverrides: Map<string, (cell: string) => TunnelOverride | undefined>;
}

export interface RecordedRequest {
  cell: string;
  method: string;
  path: string;
  /** `1.1` or `2.0`. */
  httpVersion: string;
  headers: IncomingHttpHeaders;
  /** Request body bytes (tunnels: what reached git's stdin). */
  body: Buffer;
  /** Tunnels: true once the request body ended. */
  bodyEnded: boolean;
  /**
   * Tunnels: true when the client cancelled before git finished (h2c: reset the stream with CANCEL;
   * HTTP/1.1: closed the connection before the response ended).
   */
  cancelled: boolean;
  /** Tunnels: the git exit code, once git ended. */
  exitCode: number | null | undefined;
  glId: string | undefined;
}

export function createWorld(secret: string, legacyCell: string): World {
  return {
    secret,
    legacyCell,
    users: [],
    keys: [],
    projects: [],
    learnTtl: 60,
    learnFails: false,
    learnHook: undefined,
    notFoundPages: new Set(),
    denials: new Map(),
    consoleMessages: [],
    unframedCells: new Set(),
    tunnelOverrides: new Map(),
  };
}

const NOT_FOUND =
  "The project you were looking for could not be found or you don't have permission to view it.";
const TUNNEL_RE = /^\/(.+)\.git\/(ssh-upload-pack|ssh-receive-pack|ssh-upload-archive)$/;

type CellRequest = IncomingMessage | Http2ServerRequest;
/** What the fake cell uses of `ServerResponse` and `Http2ServerResponse` alike. */
interface CellResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  writeHead(status: number, headers?: Record<string, string>): unknown;
  write(chunk: Buffer): boolean;
  end(): unknown;
  end(chunk: Buffer | string): unknown;
  on(event: 'close' | 'error', cb: () => void): unknown;
  once(event: 'drain', cb: () => void): unknown;
  /** HTTP/1.1 only: sends the head now (HTTP/2's `writeHead` does). */
  flushHeaders?(): void;
}

export class FakeCell {
  readonly requests: RecordedRequest[] = [];
  private readonly server: http.Server | http2.Http2Server;
  private readonly children = new Set<ChildProcessWithoutNullStreams>();
  /** Open connections (HTTP/1.1 sockets or HTTP/2 sessions), destroyed by `stop()`. */
  private readonly connections = new Set<{ destroy(): void }>();
  url = '';

  constructor(
    readonly name: string,
    private readonly world: World,
    readonly protocol: CellProtocol = 'http1',
  ) {
    const onRequest = (req: CellRequest, res: ServerResponse | Http2ServerResponse) => this.serve(req, res);
    if (protocol === 'h2c') {
      const server = http2.createServer(onRequest);
      server.on('session', (session) => this.track(session));
      this.server = server;
    } else {
      const server = http.createServer({ requestTimeout: 0 }, onRequest);
      server.on('connection', (socket: Socket) => this.track(socket));
      this.server = server;
    }
  }

  private serve(req: CellRequest, res: CellResponse): void {
    res.on('error', () => undefined);
    this.handle(req, res).catch(() => {
      if (!res.headersSent && !res.writableEnded) res.writeHead(500);
      if (!res.writableEnded) res.end();
    });
  }

  private track(connection: { destroy(): void; once(event: 'close', cb: () => void): unknown }): void {
    this.connections.add(connection);
    connection.once('close', () => this.connections.delete(connection));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    for (const child of this.children) child.kill('SIGKILL');
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.connections) connection.destroy();
    await closed;
  }

  /** Requests recorded so far whose path starts with `prefix`. */
  seen(prefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  private async handle(req: CellRequest, res: CellResponse): Promise<void> {
    const method = String(req.method);
    const url = new URL(String(req.url), 'http://cell');
    const headers = req.headers;
    const rec: RecordedRequest = {
      cell: this.name,
      method,
      path: url.pathname,
      httpVersion: req.httpVersion,
      headers,
      body: Buffer.alloc(0),
      bodyEnded: false,
      cancelled: false,
      exitCode: undefined,
      glId: undefined,
    };
    this.requests.push(rec);
    const tunnel = TUNNEL_RE.exec(url.pathname);
    if (method === 'POST' && tunnel) {
      await this.tunnel(req, res, rec, tunnel[1] as string, tunnel[2] as string);
      return;
    }
    const body = await readAll(req);
    rec.body = body;
    rec.bodyEnded = true;
    if (url.pathname.startsWith('/api/v4/internal/')) {
      const token = headers[SHELL_HEADER];
      const check = await verifyShellJwt(
        jwtKey(this.world.secret),
        typeof token === 'string' ? token : undefined,
      );
      if (!check.ok) return json(res, 401, { message: '401 Unauthorized' });
      const a = this.internal(url, body);
      return json(res, a.status, a.body, a.headers);
    }
    this.page(res, rec, url, headers);
  }

  /**
   * Any other path: a "page" naming the cell, echoing what the HTTP front forwarded; pages of a
   * namespace another cell owns answer 421 like the cells do.
   */
  private page(res: CellResponse, rec: RecordedRequest, url: URL, headers: IncomingHttpHeaders): void {
    const ns = url.pathname.split('/').filter(Boolean)[0];
    const owner = this.world.projects.find((p) => p.path.split('/')[0] === ns);
    if (owner && owner.cell !== this.name) {
      json(
        res,
        421,
        { status: false, message: 'Misdirected Request' },
        { 'x-gitlab-cell-redirect': owner.cell },
      );
      return;
    }
    if (this.world.notFoundPages.has(url.pathname)) {
      json(res, 404, { message: '404 Not Found' });
      return;
    }
    json(res, 200, {
      cell: this.name,
      path: url.pathname,
      method: rec.method,
      xForwardedFor: headers['x-forwarded-for'] ?? null,
      ruleAction: headers['x-gitlab-http-router-rule-action'] ?? null,
      ruleType: headers['x-gitlab-http-router-rule-type'] ?? null,
      bodyLength: rec.body.length,
    });
  }

  private internal(url: URL, body: Buffer): Answer {
    const w = this.world;
    switch (url.pathname) {
      case '/api/v4/internal/authorized_keys': {
        const key = w.keys.find((k) => k.blob === url.searchParams.get('key'));
        if (!key) return answer(404, { message: '404 Key Not Found' });
        return answer(200, { id: key.id, title: 'test key', key: `ssh-ed25519 ${key.blob} test` });
      }
      case '/api/v4/internal/discover': {
        const key = w.keys.find((k) => String(k.id) === url.searchParams.get('key_id'));
        const user = key && w.users.find((u) => u.id === key.userId);
        if (!user) return answer(200, null);
        return answer(200, { id: user.id, name: user.username, username: user.username });
      }
      case '/api/v4/internal/cells/learn': {
        if (w.learnFails) return answer(500, { message: 'learn is broken' });
        const pathInfo = url.searchParams.get('path_info') ?? '/';
        const canned = w.learnHook?.(pathInfo);
        if (canned) return answer(200, canned);
        const ns = pathInfo.split('/').filter(Boolean)[0];
        const owner = w.projects.find((p) => p.path.split('/')[0] === ns);
        if (!ns || !owner) {
          return answer(200, { path: pathInfo, cell: w.legacyCell, source: 'fallback', cache_ttl: 0 });
        }
        return answer(200, {
          path: `/${ns}`,
          cell: owner.cell,
          source: 'routable',
          cache_ttl: w.learnTtl,
        });
      }
      case '/api/v4/internal/allowed':
        return this.allowed(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
      default:
        return answer(404, { message: '404 Not Found' });
    }
  }

  private allowed(req: Record<string, unknown>): Answer {
    const w = this.world;
    const projectPath = String(req.project ?? '')
      .replace(/^\/+/, '')
      .replace(/\.git$/, '');
    const project = w.projects.find((p) => p.path === projectPath);
    const key = w.keys.find((k) => String(k.id) === String(req.key_id));
    // A certificate login sends `username` instead of `key_id`.
    const user =
      req.username === undefined
        ? key && w.users.find((u) => u.id === key.userId)
        : w.users.find((u) => u.username === req.username);
    if (!project || !user) return answer(404, { status: false, message: NOT_FOUND });
    if (project.cell !== this.name) {
      return answer(
        421,
        { status: false, message: 'Misdirected Request' },
        { 'x-gitlab-cell-redirect': project.cell },
      );
    }
    const denial = w.denials.get(`${user.username} ${String(req.action)} ${project.path}`);
    if (denial) return answer(401, { status: false, message: denial });
    return answer(200, {
      status: true,
      gl_repository: `project-${project.path}`,
      gl_project_path: project.path,
      gl_id: `user-${user.id}`,
      gl_username: user.username,
      git_config_options: [],
      gitaly: {
        repository: { storage_name: 'default', relative_path: project.repo, gl_project_path: project.path },
      },
      gl_console_messages: w.consoleMessages,
    });
  }

  /** The tunnel's refusals (bad token, unknown project, another cell's, an override), if any. */
  private async refusal(
    req: CellRequest,
    rec: RecordedRequest,
    projectPath: string,
  ): Promise<TunnelOverride | 'run'> {
    const token = req.headers[SHELL_HEADER];
    const check = await verifyShellJwt(
      jwtKey(this.world.secret),
      typeof token === 'string' ? token : undefined,
      { requireGlId: true },
    );
    const notFound = {
      status: 404,
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from('Not found'),
    };
    if (!check.ok) return notFound;
    rec.glId = check.claims.gl_id;
    const project = this.world.projects.find((p) => p.path === projectPath);
    if (!project) return notFound;
    if (project.cell !== this.name) {
      return {
        status: 421,
        headers: { 'x-gitlab-cell-redirect': project.cell, 'content-type': 'text/plain' },
        body: Buffer.from('Misdirected Request'),
      };
    }
    return this.world.tunnelOverrides.get(projectPath)?.(this.name) ?? 'run';
  }

  private async tunnel(
    req: CellRequest,
    res: CellResponse,
    rec: RecordedRequest,
    projectPath: string,
    endpoint: string,
  ): Promise<void> {
    const refused = await this.refusal(req, rec, projectPath);
    if (refused !== 'run') {
      res.writeHead(refused.status ?? 200, refused.headers ?? {});
      res.end(refused.body ?? Buffer.alloc(0));
      return;
    }
    const repo = this.world.projects.find((p) => p.path === projectPath)?.repo as string;
    const framed =
      req.headers['gitlab-cells-response-framing'] === 'v1' && !this.world.unframedCells.has(this.name);
    const gitProtocol = req.headers['git-protocol'];
    const child = spawn('git', [endpoint.slice('ssh-'.length), repo], {
      env: gitEnv(typeof gitProtocol === 'string' ? { GIT_PROTOCOL: gitProtocol } : {}),
    });
    this.children.add(child);
    res.writeHead(200, framed ? { 'gitlab-cells-response-framing': 'v1' } : {});
    if (framed) res.write(encodeFrame(ResponseFrame.keepalive));
    else res.flushHeaders?.();
    this.feed(req, rec, child);
    this.relay(req, res, rec, child, framed);
  }

  /** The request body → git's stdin, with backpressure. */
  private feed(req: CellRequest, rec: RecordedRequest, child: ChildProcessWithoutNullStreams): void {
    req.on('data', (chunk: Buffer) => {
      rec.body = Buffer.concat([rec.body, chunk]);
      if (!child.stdin.write(chunk)) {
        req.pause();
        child.stdin.once('drain', () => req.resume());
      }
    });
    req.on('end', () => {
      rec.bodyEnded = true;
      child.stdin.end();
    });
    child.stdin.on('error', () => undefined);
  }

  /** git's stdout and stderr → the response (framed or not); the client leaving kills git. */
  private relay(
    req: CellRequest,
    res: CellResponse,
    rec: RecordedRequest,
    child: ChildProcessWithoutNullStreams,
    framed: boolean,
  ): void {
    let closed = false;
    res.on('close', () => {
      closed = true;
      if (rec.exitCode === undefined) {
        rec.cancelled =
          'stream' in req ? req.stream.rstCode === http2.constants.NGHTTP2_CANCEL : !res.writableFinished;
        child.kill('SIGKILL');
      }
    });
    const relay = (type: number) => (chunk: Buffer) => {
      if (closed) return;
      const ok = res.write(framed ? encodeFrame(type, chunk) : chunk);
      if (!ok) {
        child.stdout.pause();
        child.stderr.pause();
        res.once('drain', () => {
          child.stdout.resume();
          child.stderr.resume();
        });
      }
    };
    child.stdout.on('data', relay(ResponseFrame.stdout));
    child.stderr.on('data', relay(ResponseFrame.stderr));
    child.on('close', (code) => {
      this.children.delete(child);
      if (rec.cancelled || closed) {
        rec.exitCode = rec.exitCode === undefined ? null : rec.exitCode;
        return;
      }
      rec.exitCode = code;
      if (framed) res.end(encodeExitStatus(code ?? 1));
      else res.end();
    });
  }
}

/** A framed tunnel body that reports a failure the way a bridge does when Gitaly fails. */
export function errorFrames(message: string, stderr?: string): Buffer {
  const parts = [encodeFrame(ResponseFrame.keepalive)];
  if (stderr) parts.push(encodeFrame(ResponseFrame.stderr, Buffer.from(stderr)));
  parts.push(encodeErrorFrame('INTERNAL', message));
  return Buffer.concat(parts);
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

function answer(status: number, body: unknown, headers?: Record<string, string>): Answer {
  return { status, body, headers };
}

function json(res: CellResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function readAll(req: CellRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Starts one fake cell per name over the same world, each speaking `protocol`. */
export async function startFakeCells(
  names: string[],
  world: World,
  protocol: CellProtocol = 'http1',
): Promise<Map<string, FakeCell>> {
  const cells = new Map<string, FakeCell>();
  for (const name of names) {
    const cell = new FakeCell(name, world, protocol);
    await cell.start();
    cells.set(name, cell);
  }
  return cells;
}

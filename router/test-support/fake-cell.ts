import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import http2, { type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { encodeErrorFrame, encodeExitStatus, encodeFrame, ResponseFrame } from '../../lib/framing.js';
import { jwtKey, SHELL_HEADER, verifyShellJwt } from '../../lib/jwt.js';
import { gitEnv } from './git-repos.js';

/**
 * Test double for a cell's bridge as the router sees it: one cleartext HTTP/2 server per cell over a
 * shared, mutable "world". It answers the internal API (`authorized_keys`, `discover`,
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
  headers: IncomingHttpHeaders;
  /** Request body bytes (tunnels: what reached git's stdin). */
  body: Buffer;
  /** Tunnels: true once the request body ended. */
  bodyEnded: boolean;
  /** Tunnels: true when the client reset the stream with CANCEL before git finished. */
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

export class FakeCell {
  readonly requests: RecordedRequest[] = [];
  private readonly server = http2.createServer();
  private readonly children = new Set<ChildProcessWithoutNullStreams>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  url = '';

  constructor(
    readonly name: string,
    private readonly world: World,
  ) {
    this.server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
    });
    this.server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined);
      this.handle(stream, headers).catch(() => {
        if (!stream.headersSent && !stream.closed) stream.respond({ ':status': 500 });
        if (!stream.closed) stream.end();
      });
    });
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
    for (const session of this.sessions) session.destroy();
    await closed;
  }

  /** Requests recorded so far whose path starts with `prefix`. */
  seen(prefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  private async handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> {
    const method = String(headers[':method']);
    const fullPath = String(headers[':path']);
    const url = new URL(fullPath, 'http://cell');
    const rec: RecordedRequest = {
      cell: this.name,
      method,
      path: url.pathname,
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
      await this.tunnel(stream, headers, rec, tunnel[1] as string, tunnel[2] as string);
      return;
    }
    if (url.pathname.startsWith('/api/v4/internal/')) {
      const body = await readAll(stream);
      rec.body = body;
      rec.bodyEnded = true;
      const token = headers[SHELL_HEADER];
      const check = await verifyShellJwt(
        jwtKey(this.world.secret),
        typeof token === 'string' ? token : undefined,
      );
      if (!check.ok) return json(stream, 401, { message: '401 Unauthorized' });
      const a = this.internal(url, body);
      return json(stream, a.status, a.body, a.headers);
    }
    // Any other path: a "page" naming the cell, echoing what the HTTP front forwarded; pages of a
    // namespace another cell owns answer 421 like the cells do.
    const body = await readAll(stream);
    rec.body = body;
    rec.bodyEnded = true;
    const ns = url.pathname.split('/').filter(Boolean)[0];
    const owner = this.world.projects.find((p) => p.path.split('/')[0] === ns);
    if (owner && owner.cell !== this.name) {
      return json(
        stream,
        421,
        { status: false, message: 'Misdirected Request' },
        { 'x-gitlab-cell-redirect': owner.cell },
      );
    }
    if (this.world.notFoundPages.has(url.pathname)) {
      return json(stream, 404, { message: '404 Not Found' });
    }
    json(stream, 200, {
      cell: this.name,
      path: url.pathname,
      method,
      xForwardedFor: headers['x-forwarded-for'] ?? null,
      ruleAction: headers['x-gitlab-http-router-rule-action'] ?? null,
      ruleType: headers['x-gitlab-http-router-rule-type'] ?? null,
      bodyLength: body.length,
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

  private async tunnel(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    rec: RecordedRequest,
    projectPath: string,
    endpoint: string,
  ): Promise<void> {
    const token = headers[SHELL_HEADER];
    const check = await verifyShellJwt(
      jwtKey(this.world.secret),
      typeof token === 'string' ? token : undefined,
      {
        requireGlId: true,
      },
    );
    if (!check.ok) {
      stream.respond({ ':status': 404, 'content-type': 'text/plain' });
      stream.end('Not found');
      return;
    }
    rec.glId = check.claims.gl_id;
    const project = this.world.projects.find((p) => p.path === projectPath);
    if (!project) {
      stream.respond({ ':status': 404, 'content-type': 'text/plain' });
      stream.end('Not found');
      return;
    }
    if (project.cell !== this.name) {
      stream.respond({
        ':status': 421,
        'x-gitlab-cell-redirect': project.cell,
        'content-type': 'text/plain',
      });
      stream.end('Misdirected Request');
      return;
    }
    const override = this.world.tunnelOverrides.get(projectPath)?.(this.name);
    if (override) {
      stream.respond({ ':status': override.status ?? 200, ...override.headers });
      stream.end(override.body ?? Buffer.alloc(0));
      return;
    }
    const framed =
      headers['gitlab-cells-response-framing'] === 'v1' && !this.world.unframedCells.has(this.name);
    const verb = endpoint.slice('ssh-'.length);
    const gitProtocol = headers['git-protocol'];
    const child = spawn('git', [verb, project.repo], {
      env: gitEnv(typeof gitProtocol === 'string' ? { GIT_PROTOCOL: gitProtocol } : {}),
    });
    this.children.add(child);
    stream.respond({ ':status': 200, ...(framed ? { 'gitlab-cells-response-framing': 'v1' } : {}) });
    if (framed) stream.write(encodeFrame(ResponseFrame.keepalive));

    stream.on('data', (chunk: Buffer) => {
      rec.body = Buffer.concat([rec.body, chunk]);
      if (!child.stdin.write(chunk)) {
        stream.pause();
        child.stdin.once('drain', () => stream.resume());
      }
    });
    stream.on('end', () => {
      rec.bodyEnded = true;
      child.stdin.end();
    });
    child.stdin.on('error', () => undefined);
    stream.on('close', () => {
      if (rec.exitCode === undefined) {
        rec.cancelled = stream.rstCode === http2.constants.NGHTTP2_CANCEL;
        child.kill('SIGKILL');
      }
    });
    const relay = (type: number) => (chunk: Buffer) => {
      if (stream.closed) return;
      const ok = stream.write(framed ? encodeFrame(type, chunk) : chunk);
      if (!ok) {
        child.stdout.pause();
        child.stderr.pause();
        stream.once('drain', () => {
          child.stdout.resume();
          child.stderr.resume();
        });
      }
    };
    child.stdout.on('data', relay(ResponseFrame.stdout));
    child.stderr.on('data', relay(ResponseFrame.stderr));
    child.on('close', (code) => {
      this.children.delete(child);
      if (rec.cancelled || stream.closed) {
        rec.exitCode = rec.exitCode === undefined ? null : rec.exitCode;
        return;
      }
      rec.exitCode = code;
      if (framed) stream.end(encodeExitStatus(code ?? 1));
      else stream.end();
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

function json(
  stream: ServerHttp2Stream,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (stream.closed) return;
  stream.respond({ ':status': status, 'content-type': 'application/json', ...headers });
  stream.end(JSON.stringify(body));
}

function readAll(stream: ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

/** Starts one fake cell per name over the same world. */
export async function startFakeCells(names: string[], world: World): Promise<Map<string, FakeCell>> {
  const cells = new Map<string, FakeCell>();
  for (const name of names) {
    const cell = new FakeCell(name, world);
    await cell.start();
    cells.set(name, cell);
  }
  return cells;
}

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jwtKey } from '../../lib/jwt.js';
import { createLogger } from '../../lib/logger.js';
import { CellDirectory } from '../cells/directory.js';
import { InternalApi } from '../cells/internal-api.js';
import { loadRouterConfig } from '../config.js';
import { parseCustomAction } from './custom-action.js';
import { forwardToPrimary, PrimaryClients } from './forward.js';
import { SiteLearner } from './site-learner.js';

/** A cell whose `/allowed` answers `answer` (status, headers, JSON body). */
let answer: { status: number; headers?: Record<string, string>; body: unknown };
let server: http.Server;
let cells: CellDirectory;

beforeAll(async () => {
  // The cell's internal API over HTTP/1.1 (the router's default); the primaries below speak HTTP/2.
  server = http.createServer((_req, res) => {
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  cells = new CellDirectory(
    [{ id: 1, name: 'cell_us0', legacy: true, region: 'us', url: `http://127.0.0.1:${port}` }],
    'us',
  );
});

afterAll(async () => {
  await cells.close();
  await new Promise((resolve) => server.close(resolve));
});

const api = () => new InternalApi(cells, jwtKey('secret'), 5_000);
const request = {
  action: 'git-receive-pack',
  project: 'g/p.git',
  key_id: '1',
  changes: '_any',
  protocol: 'ssh',
} as const;

const CUSTOM = {
  status: true,
  payload: {
    action: 'geo_proxy_to_primary',
    data: {
      api_endpoints: ['/api/v4/geo/proxy_git_ssh/info_refs_receive_pack'],
      gl_username: 'bob',
      primary_repo: 'http://primary.example:4001/g/p.git',
      request_headers: { Authorization: 'GL-Geo key:jwt' },
      geo_proxy_push_ssh_direct_to_primary: true,
    },
  },
  gl_console_messages: ['This request to a Geo secondary node will be forwarded to the'],
};

describe('/allowed in two shapes', () => {
  it('returns a 300 as a custom action with its console messages, not an error', async () => {
    answer = { status: 300, body: CUSTOM };
    const result = await api().allowed(cells.legacy, request, { requestId: 'r' });
    expect(result.kind).toBe('custom-action');
    if (result.kind !== 'custom-action') return;
    expect(result.consoleMessages).toEqual(CUSTOM.gl_console_messages);
    expect(result.custom).toMatchObject({
      action: 'geo_proxy_to_primary',
      requestHeaders: { Authorization: 'GL-Geo key:jwt' },
      pushSshDirect: true,
      fetchSshDirect: false,
    });
    expect(result.custom.primaryRepo.href).toBe('http://primary.example:4001/g/p.git');
  });

  it('keeps redirects errors, as gitlab-shell (never followed)', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      answer = { status, headers: { location: 'http://elsewhere/allowed' }, body: CUSTOM };
      await expect(api().allowed(cells.legacy, request, { requestId: 'r' })).rejects.toThrow(
        `Internal API returned redirect (${status}) to "http://elsewhere/allowed"`,
      );
    }
  });

  it('refuses a custom action without an http(s) primary_repo', () => {
    expect(() => parseCustomAction({ data: { primary_repo: 'ftp://x/y.git' } })).toThrow(
      /not an http\(s\) URL/,
    );
    expect(() => parseCustomAction({ data: {} })).toThrow(/primary_repo undefined/);
    expect(() => parseCustomAction(undefined)).toThrow(/without a custom action payload/);
  });
});

describe('routing "site"', () => {
  it('sends every path to the one site', async () => {
    const learned = await new SiteLearner(cells.legacy).learn(cells.legacy, 'GET', '/any/where', {
      requestId: 'r',
    });
    expect(learned).toEqual({
      path: '/any/where',
      cell: 'cell_us0',
      source: 'fixed',
      exact: true,
      cacheTtl: 0,
    });
  });

  it('needs exactly one cell', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-site-'));
    try {
      const path = join(dir, 'router.json');
      const cell = { id: 1, name: 'a', legacy: true, region: 'us', url: 'http://127.0.0.1:1' };
      writeFileSync(
        path,
        JSON.stringify({
          routing: 'site',
          hostKeyFile: '/k',
          shellSecretFile: '/s',
          region: 'us',
          cells: [cell, { ...cell, id: 2, name: 'b', legacy: false }],
        }),
      );
      expect(() => loadRouterConfig(['node', 'main.js', '--config', path], {})).toThrow(
        'routing "site" serves one site: cells must have one entry, got 2',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('forward to the primary', () => {
  const io = () => {
    const stdin = new PassThrough();
    const out: Buffer[] = [];
    const stdout = new PassThrough();
    stdout.on('data', (c: Buffer) => out.push(c));
    return { io: { stdin, stdout, stderr: new PassThrough() }, out };
  };
  const ctx = (streams: ReturnType<typeof io>['io']) => ({
    io: streams,
    gitProtocol: undefined,
    signal: new AbortController().signal,
    log: createLogger('router-geo-test', 'silent'),
  });

  it('posts to <primary_repo>/ssh-receive-pack with request_headers and an empty Git-Protocol; copies the answer', async () => {
    const seen: Array<{ path?: string; auth?: string; proto?: string }> = [];
    const primary = http2.createServer((req, res) => {
      seen.push({
        path: req.url,
        auth: req.headers.authorization,
        proto: req.headers['git-protocol'] as string,
      });
      req.resume();
      res.writeHead(200);
      res.end('the primary speaks');
    });
    await new Promise<void>((resolve) => primary.listen(0, '127.0.0.1', resolve));
    const clients = new PrimaryClients();
    try {
      const port = (primary.address() as AddressInfo).port;
      const custom = parseCustomAction({
        ...CUSTOM.payload,
        data: { ...CUSTOM.payload.data, primary_repo: `http://127.0.0.1:${port}/g/p.git` },
      });
      const s = io();
      s.io.stdin.end();
      expect(await forwardToPrimary(clients, ctx(s.io), 'git-receive-pack', custom)).toBe(0);
      expect(Buffer.concat(s.out).toString()).toBe('the primary speaks');
      expect(seen).toEqual([{ path: '/g/p.git/ssh-receive-pack', auth: 'GL-Geo key:jwt', proto: '' }]);
      // No fetch switch in this payload: gitlab-shell would fall back to smart HTTP, we refuse.
      await expect(forwardToPrimary(clients, ctx(io().io), 'git-upload-pack', custom)).rejects.toThrow(
        /does not allow SSH-over-HTTP/,
      );
    } finally {
      await clients.close();
      await new Promise((resolve) => primary.close(resolve));
    }
  });

  it("turns the primary's refusal (≥ 400) into its text, and an unreachable primary into gitlab-shell's", async () => {
    const primary = http2.createServer((req, res) => {
      req.resume();
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('Cannot push to secondary.');
    });
    await new Promise<void>((resolve) => primary.listen(0, '127.0.0.1', resolve));
    const port = (primary.address() as AddressInfo).port;
    const custom = parseCustomAction({
      ...CUSTOM.payload,
      data: { ...CUSTOM.payload.data, primary_repo: `http://127.0.0.1:${port}/g/p.git` },
    });
    const clients = new PrimaryClients();
    try {
      await expect(forwardToPrimary(clients, ctx(io().io), 'git-receive-pack', custom)).rejects.toThrow(
        'Cannot push to secondary.',
      );
    } finally {
      await clients.close();
      await new Promise((resolve) => primary.close(resolve));
    }
    const fresh = new PrimaryClients();
    try {
      await expect(forwardToPrimary(fresh, ctx(io().io), 'git-receive-pack', custom)).rejects.toThrow(
        'Remote repository is unavailable',
      );
    } finally {
      await fresh.close();
    }
  });
});

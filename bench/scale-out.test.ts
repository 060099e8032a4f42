import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITALY_OVERLOADED_MESSAGE } from '../bridge/gitaly-errors.js';
import { CELLS_USER, PROJECTS } from './bench-data.js';
import { type ScaleOutResult, scaleOut } from './scale-out.js';
import { failureCauses } from './scale-out-clones.js';
import { scaleOutHaproxyConfig } from './scale-out-servers.js';
import { type BenchStack, startBenchStack } from './stack-runner.js';

/**
 * The scale-out wiring with real parts: a world, two more routers of it with PROXY protocol v2
 * required, Debian's HAProxy in front, real `git` and OpenSSH clients each from its own loopback
 * address. 20 clones through both, 20 through one router, 20 through both with mock Gitaly's limiter on, then
 * one router SIGKILLed mid-burst.
 */
const CLONES = 20;
const UPLOAD_PACK = '/gitaly.SSHService/SSHUploadPackWithSidechannel';
let dir: string;
let stack: BenchStack | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'scale-out-'));
  stack = await startBenchStack(join(dir, 'world'), {
    env: { STACK_GEO: 'off', BRIDGE_MAX_TUNNELS_PER_USER: '0' },
    timeoutMs: 60_000,
  });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  if (!process.env.KEEP_SCALE_OUT) await rm(dir, { recursive: true, force: true });
}, 60_000);

function smallProject(s: BenchStack): { head: string; privateKey: string } {
  const project = s.json.projects.find((p) => p.path === PROJECTS.small.path);
  const user = s.json.users.find((u) => u.username === CELLS_USER);
  if (!project || !user) throw new Error('stack.json lacks the small project or its user');
  const head = spawnSync('git', ['--git-dir', project.repository, 'rev-parse', 'refs/heads/main'], {
    encoding: 'utf8',
  }).stdout.trim();
  return { head, privateKey: user.privateKey };
}

describe('two routers behind HAProxy', () => {
  it('spreads clones over both routers, passes the client address to check_ip, survives a router killed', async () => {
    if (!stack) throw new Error('no stack');
    const { head, privateKey } = smallProject(stack);
    const r: ScaleOutResult = await scaleOut({
      stack,
      stackEnv: {},
      baseEnv: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
      dir: join(dir, 'run'),
      project: PROJECTS.small.path,
      head,
      privateKey,
      clones: CLONES,
      timeoutMs: 60_000,
      // Tight enough that 20 clones at once overflow it: the limited burst shows the limiter was on.
      gitalyLimits: [{ rpc: UPLOAD_PACK, maxPerRepo: 1, maxQueueSize: 1, maxQueueWaitMs: 0 }],
      log: (line) => process.stderr.write(`${line}\n`),
    });
    expect(r.alone.firstError).toBeUndefined();
    expect(r.pair.firstError).toBeUndefined();
    expect(r.alone.perRouter).toEqual({ 'router-a': CLONES, 'router-b': 0 });
    expect((r.pair.perRouter['router-a'] ?? 0) + (r.pair.perRouter['router-b'] ?? 0)).toBe(CLONES);
    expect(r.pair.perRouter['router-a']).toBeGreaterThan(0);
    expect(r.pair.perRouter['router-b']).toBeGreaterThan(0);
    expect(r.checkIp).toMatchObject({ matched: 2 * CLONES, clones: 2 * CLONES, balancerAddress: 0 });
    expect(r.checkIp.sample.every((ip) => /^127\.[23]\./.test(ip))).toBe(true);
    // With mock Gitaly's limiter on, the calls over its queue were refused with the bridge's words
    // for RESOURCE_EXHAUSTED; the failure run after it (limits reset) met none.
    const limited = r.limited;
    expect(limited?.errors).toBeGreaterThan(0);
    expect(limited?.errors).toBeLessThan(CLONES);
    expect(Object.keys(limited?.errorCauses ?? {}).join('\n')).toContain(GITALY_OVERLOADED_MESSAGE);
    const f = r.failover;
    expect(f.failed + f.succeeded).toBe(CLONES);
    expect(f.succeeded).toBeGreaterThan(0);
    // What git shows for a clone in flight on the killed router: ssh's own line, then git's, or only
    // git's when the router died during the key exchange (ssh's "Connection closed by <address>" is
    // below the clients' LogLevel=ERROR).
    if (f.failed > 0)
      expect(f.failedStderr).toMatch(
        /closed by remote host|remote end hung up|reset by peer|^exit 128: fatal: Could not read from remote repository/,
      );
    expect(f.downAfterMs).toBeDefined();
    expect(f.after).toEqual({ clones: 10, errors: 0, errorCauses: {} });
    const routerLog = readFileSync(join(stack.dataDir, 'logs', 'router-a.log'), 'utf8');
    // The routers log the client's address, and HAProxy's as the proxy.
    expect(routerLog).toMatch(/"remote_ip":"127\.2\.\d+\.\d+"[^\n]*"proxy_ip":"127\.0\.0\.1"/);
  }, 120_000);
});

describe('scaleOutHaproxyConfig', () => {
  it('sends PROXY v2 to each router, health-checks them and keeps the alone frontend tracking the first', () => {
    const cfg = scaleOutHaproxyConfig({
      listen: '127.0.0.1:2222',
      aloneListen: '127.0.0.1:2223',
      routers: [
        { name: 'router-a', ssh: '127.0.0.1:3001' },
        { name: 'router-b', ssh: '127.0.0.1:3002' },
      ],
      statsSocket: '/tmp/x.sock',
      checkIntervalMs: 500,
      maxConnPerRouter: 100,
    });
    expect(cfg).toContain('mode tcp');
    expect(cfg).toContain('default-server send-proxy-v2 check check-send-proxy inter 500ms');
    expect(cfg).toContain('server router-b 127.0.0.1:3002');
    expect(cfg).toContain('track routers/router-a maxconn 100');
    expect(cfg).toMatch(/default-server .* maxconn 100\n/);
    expect(cfg).toContain('timeout queue 10m');
    expect(cfg).toContain('timeout check 60s');
  });
});

describe('failed clones counted by cause', () => {
  it('tells a balancer that closed the connection from a router that refused the clone', () => {
    const fatal =
      'fatal: Could not read from remote repository. |  | Please make sure you have the correct access rights';
    const outcomes = [
      { address: 'a', ok: true, ms: 1 },
      {
        address: 'b',
        ok: false,
        ms: 1,
        error: `exit 128: kex_exchange_identification: Connection closed by remote host | ${fatal}`,
      },
      {
        address: 'c',
        ok: false,
        ms: 1,
        error: `exit 128: kex_exchange_identification: Connection closed by remote host | ${fatal}`,
      },
      {
        address: 'd',
        ok: false,
        ms: 1,
        error: `exit 128: remote:  | remote: ${'='.repeat(72)} | remote:  | remote: ERROR: Internal API unreachable |  | remote:  | ${fatal}`,
      },
      {
        address: 'e',
        ok: false,
        ms: 1,
        error: `exit 128: git@127.0.0.1: Permission denied (publickey). | ${fatal}`,
      },
      { address: 'f', ok: false, ms: 1, error: 'timed out' },
    ];
    expect(failureCauses(outcomes)).toEqual({
      'connection closed before the SSH banner': 2,
      'ERROR: Internal API unreachable': 1,
      'Permission denied (publickey)': 1,
      'timed out': 1,
    });
  });
});

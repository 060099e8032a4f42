import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../test/helpers/poll.js';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';
import { claimOf, topologyClients, updateClaims } from './client.js';
import { cleanup, onCleanup, TEST_CELLS, tempDir } from './test-support/harness.js';

/** `topology-service/main.ts` compiled and run as its own process: config errors, listening, signals. */
let programs: CompiledPrograms;
let dir: string;
const children = new Set<ChildProcessWithoutNullStreams>();

beforeAll(async () => {
  programs = await compilePrograms(['topology-service/main.ts']);
  dir = tempDir('topology-main-');
}, 120_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  programs?.cleanup();
  await cleanup();
});

function start(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, `config-${children.size}.json`);
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [programs.path('topology-service/main.ts'), '--config', file], {
    env: { PATH: process.env.PATH, ...env },
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, exited, lines, err: () => stderr };
}

const valid = () => ({ grpcListen: '127.0.0.1:0', httpListen: '127.0.0.1:0', cells: TEST_CELLS });

describe('topology-service main', () => {
  it('logs listening with both addresses, serves both sides, stops on SIGTERM with exit 0', async () => {
    const svc = start(valid());
    const listening = await waitUntil(
      () => svc.lines().find((l) => l.msg === 'listening'),
      20_000,
      `the listening line (stderr: ${svc.err()})`,
    );
    expect(listening).toMatchObject({
      service: 'topology-service',
      grpc: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      http: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      tls: false,
      cells: ['cell-1', 'cell-2', 'cell-3'],
    });
    const clients = topologyClients(listening.grpc as string);
    onCleanup(() => clients.close());
    await updateClaims(clients, 2, [claimOf('route', 'gitlab-org')]);
    const res = await fetch(`http://${listening.http}/v1/classify`, {
      method: 'POST',
      body: '{"claims":[{"route":"gitlab-org"}]}',
    });
    expect(await res.json()).toMatchObject({ proxy: { address: 'cell-2.example' } });
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    expect(svc.lines().map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    expect(svc.lines().find((l) => l.msg === 'shutting down')).toMatchObject({
      signal: 'SIGTERM',
      claims: 1,
    });
  });

  it.each([
    [{ ...valid(), cells: [] }, 'cells (TOPOLOGY_CELLS) must be a non-empty array'],
    [{ ...valid(), cells: [TEST_CELLS[0], { ...TEST_CELLS[1], id: 1 }] }, 'two cells have id 1'],
    [{ ...valid(), grpcListen: 'nowhere' }, 'grpcListen (TOPOLOGY_GRPC_LISTEN) must look like host:port'],
    [{ ...valid(), tlsCertFile: '/nonexistent/cert.pem' }, 'tlsCertFile and tlsKeyFile go together'],
    [{ ...valid(), cfAccessClientId: 'x' }, 'cfAccessClientId and cfAccessClientSecretFile go together'],
    [
      { ...valid(), claimConflict: 'merge' },
      'claimConflict (TOPOLOGY_CLAIM_CONFLICT) must be one of move, reject',
    ],
    [{ ...valid(), typo: 1 }, 'unknown setting "typo"'],
  ])('exits 78 naming the bad setting: %j', async (config, message) => {
    const svc = start(config);
    expect(await svc.exited).toBe(78);
    expect(svc.err()).toContain('topology-service: bad configuration: ');
    expect(svc.err()).toContain(message);
    expect(svc.lines()).toEqual([]);
  });

  it('an environment override is validated too', async () => {
    const svc = start(valid(), { TOPOLOGY_ACCEPT_CLAIM_FIELD4: 'maybe' });
    expect(await svc.exited).toBe(78);
    expect(svc.err()).toContain('acceptClaimField4 (TOPOLOGY_ACCEPT_CLAIM_FIELD4) must be true or false');
  });

  it('exits 1 naming the address when a port is taken', async () => {
    const first = start(valid());
    const listening = await waitUntil(
      () => first.lines().find((l) => l.msg === 'listening'),
      20_000,
      'listening',
    );
    const second = start({ ...valid(), httpListen: listening.http });
    expect(await second.exited).toBe(1);
    expect(second.err()).toContain('EADDRINUSE');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  });
});

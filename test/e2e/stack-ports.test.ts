import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allStackPorts,
  collisionFreeStep,
  EXIT_ADDRESS_IN_USE,
  findSpareOffset,
  HOST,
  stackPorts,
} from '../../stack/layout.js';
import { isAlive, processesOf } from '../helpers/procs.js';
import { run } from '../helpers/run.js';
import { killGroup, type StackProcess, StackStartError, spawnStack, startStack } from '../helpers/stack.js';

/** A listener of this test process: unrelated to any stack, and it accepts connections. */
function holdPort(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, HOST, () => resolve(server));
  });
}

/** The exit code of a stack that must stop on its own; undefined if it is still running after `ms`. */
async function exitWithin(stack: StackProcess, ms: number): Promise<number | null | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    stack.closed,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]);
  clearTimeout(timer);
  return result;
}

/** What must hold for every start that found `address` taken. */
function expectRefusedStart(
  stack: StackProcess,
  code: number | null | undefined,
  dataDir: string,
  service: string,
  address: string,
): void {
  const stderr = stack.stderr();
  expect(code, stderr).toBe(EXIT_ADDRESS_IN_USE);
  // One message, naming the service and the address, and saying what to do.
  expect(stderr.match(/stack failed to start/g)).toHaveLength(1);
  expect(stderr).toContain(`${service} cannot listen on ${address}`);
  expect(stderr).toContain('already in use by another process');
  expect(stderr).toMatch(/STACK_PORT_OFFSET=\d+ npm start/);
  expect(stderr).toContain(`or free ${address}`);
  expect(stderr).not.toContain('exited unexpectedly');
  // Nothing printed as up, no stack.json.
  expect(stack.stdout()).not.toContain('is up');
  expect(existsSync(join(dataDir, 'stack.json'))).toBe(false);
  // The main process waited for every service: none is left, not even for a moment.
  expect(processesOf(stack.pgid, dataDir)).toEqual([]);
  // The service's own log file still records why.
  expect(readFileSync(join(dataDir, 'logs', `${service}.log`), 'utf8')).toContain('EADDRINUSE');
}

const ports = (offset: number) => stackPorts(offset);

const KINDS: Array<{
  kind: string;
  port: (offset: number) => number;
  service: string;
  /** Services of earlier tiers that were up and must have been stopped. */
  startedBefore: string[];
}> = [
  {
    kind: 'router SSH',
    port: (o) => ports(o).routerSsh,
    service: 'router',
    startedBefore: ['bridge-cell_eu0'],
  },
  {
    kind: 'router HTTP',
    port: (o) => ports(o).routerHttp,
    service: 'router',
    startedBefore: ['bridge-cell_us0'],
  },
  {
    kind: 'router metrics',
    port: (o) => ports(o).routerMetrics,
    service: 'router',
    startedBefore: ['bridge-cell_us1'],
  },
  {
    kind: 'a bridge',
    port: (o) => ports(o).bridge(3),
    service: 'bridge-cell_eu0',
    startedBefore: ['gitaly-cell_eu0', 'mock-cell'],
  },
  {
    kind: 'a bridge metrics',
    port: (o) => ports(o).bridgeMetrics(1),
    service: 'bridge-cell_us0',
    startedBefore: ['gitaly-cell_us0'],
  },
  { kind: 'a mock Gitaly', port: (o) => ports(o).gitaly(4), service: 'gitaly-cell_eu1', startedBefore: [] },
  { kind: 'a mock cell', port: (o) => ports(o).rails(2), service: 'mock-cell', startedBefore: [] },
];

describe('npm start with one of its ports held by an unrelated listener', () => {
  it.each(KINDS)(
    '$kind port taken: non-zero exit, one message naming $service and the address, nothing up, no process left',
    async ({ port, service, startedBefore }) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'cells-stack-ports-'));
      const offset = await findSpareOffset();
      const taken = port(offset);
      const address = `${HOST}:${taken}`;
      const holder = await holdPort(taken);
      let stack: StackProcess | undefined;
      try {
        stack = spawnStack({ dataDir, offset });
        const code = await exitWithin(stack, 90_000);
        expectRefusedStart(stack, code, dataDir, service, address);
        // Services of the earlier tiers were really up, and were stopped by the stack.
        for (const name of startedBefore) {
          const log = readFileSync(join(dataDir, 'logs', `${name}.log`), 'utf8');
          expect(log, name).toContain('"msg":"listening"');
          expect(log, name).toContain('"msg":"stopped"');
        }
        // The suggested offset is another one, and does not use the taken port.
        const suggested = Number(/STACK_PORT_OFFSET=(\d+)/.exec(stack.stderr())?.[1]);
        expect(suggested).not.toBe(offset);
        expect(allStackPorts(suggested)).not.toContain(taken);
        // The unrelated listener is untouched.
        expect(holder.listening).toBe(true);
      } finally {
        if (stack) killGroup(stack.pgid);
        await new Promise((r) => holder.close(() => r(undefined)));
        await rm(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});

describe('a second npm start on the ports of a running stack', () => {
  it('stops with the taken address named, leaving the running stack as it was', async () => {
    const first = await startStack();
    const dataDir = mkdtempSync(join(tmpdir(), 'cells-stack-ports-'));
    let second: StackProcess | undefined;
    try {
      second = spawnStack({ dataDir, offset: first.portOffset });
      const code = await exitWithin(second, 90_000);
      const stderr = second.stderr();
      // Which of the first tier hits a taken port first varies; it is one of the first stack's.
      const named = /(\S+) cannot listen on (\S+:\d+)/.exec(stderr);
      expect(named, stderr).not.toBeNull();
      const [, service, address] = named as RegExpExecArray;
      expect(allStackPorts(first.portOffset).map((p) => `${HOST}:${p}`)).toContain(address);
      expectRefusedStart(second, code, dataDir, service as string, address as string);

      // The first stack still runs and serves.
      expect(Object.values(first.json.pids).every(isAlive)).toBe(true);
      const r = await run('git', ['ls-remote', first.url('gitlab-org/gitlab-test')], {
        env: first.gitEnv('bob'),
      });
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/refs\/heads\/main/);
    } finally {
      if (second) killGroup(second.pgid);
      await rm(dataDir, { recursive: true, force: true });
      await first.stop();
    }
  }, 300_000);
});

describe('startStack (the test helper) and a port race', () => {
  it('retries with another offset when a port of its first offset is taken', async () => {
    const first = await findSpareOffset();
    const holder = await holdPort(stackPorts(first).gitaly(2));
    const tried: number[] = [];
    try {
      const stack = await startStack({
        pickOffset: async (attempt) => {
          const offset = attempt === 1 ? first : await findSpareOffset();
          tried.push(offset);
          return offset;
        },
      });
      try {
        expect(tried).toHaveLength(2);
        expect(stack.portOffset).toBe(tried[1]);
        expect(stack.portOffset).not.toBe(first);
      } finally {
        await stack.stop();
      }
    } finally {
      await new Promise((r) => holder.close(() => r(undefined)));
    }
  }, 300_000);

  it('does not retry a start that failed for another reason', async () => {
    const tried: number[] = [];
    const failed = await startStack({
      logLevel: 'no-such-level',
      pickOffset: async () => {
        const offset = await findSpareOffset();
        tried.push(offset);
        return offset;
      },
    }).then(
      (stack) => stack.stop().then(() => undefined),
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(StackStartError);
    expect(failed).toMatchObject({ addressInUse: false, attempts: 1 });
    expect(tried).toHaveLength(1);
  }, 300_000);
});

describe('offsets of test and benchmark stacks', () => {
  it('never share a port with each other and stay below the ephemeral port range', async () => {
    const step = collisionFreeStep();
    expect(step % 100).toBe(0);
    // Every offset the spare-offset search can return (it only returns ones it found free).
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) seen.add(await findSpareOffset());
    const offsets = [...seen];
    for (const o of offsets) expect((o - 10_000) % step).toBe(0);
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    for (const o of offsets) {
      for (const p of allStackPorts(o)) expect(p < Number(low) || p > Number(high)).toBe(true);
    }
    // Any two offsets of that step, even far apart, bind disjoint ports.
    for (let a = 0; a < 30; a++) {
      for (let b = a + 1; b < 30; b++) {
        const shared = allStackPorts(10_000 + a * step).filter((p) =>
          allStackPorts(10_000 + b * step).includes(p),
        );
        expect(shared, `${a} vs ${b}`).toEqual([]);
      }
    }
  });
});

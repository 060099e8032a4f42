import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/poll.js';
import { isAlive } from '../helpers/procs.js';
import { run } from '../helpers/run.js';
import { type RunningStack, readStackJson, startStack } from '../helpers/stack.js';

let stack: RunningStack;
let work: string;

beforeAll(async () => {
  stack = await startStack();
  work = mkdtempSync(join(tmpdir(), 'supervisor-restart-'));
});

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const currentPids = () => readStackJson(join(stack.dataDir, 'stack.json')).pids;

describe('stack supervisor: a service that dies is started again', () => {
  it('restarts a SIGKILLed bridge with backoff, says so in its log, and the stack serves through it again', async () => {
    const name = 'bridge-cell_eu0';
    const before = currentPids()[name] as number;
    expect(isAlive(before)).toBe(true);
    process.kill(before, 'SIGKILL');

    const after = await waitUntil(
      () => {
        const pid = currentPids()[name];
        return pid !== undefined && pid !== before && isAlive(pid) ? pid : undefined;
      },
      30_000,
      'stack.json to name a new, running bridge process',
      100,
    );
    expect(after).not.toBe(before);
    const log = readFileSync(join(stack.dataDir, 'logs', `${name}.log`), 'utf8');
    const note = log
      .split('\n')
      .filter((l) => l.includes('supervisor restarting the service'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(note).toHaveLength(1);
    expect(note[0]).toMatchObject({ service: name, attempt: 1, delay_ms: 500 });
    // Every other service kept running.
    for (const [other, pid] of Object.entries(currentPids()))
      if (other !== name) expect(isAlive(pid)).toBe(true);

    const r = await run('git', ['clone', '-q', stack.url('my-company/my-project'), join(work, 'after')], {
      env: stack.gitEnv('alice'),
    });
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);
});

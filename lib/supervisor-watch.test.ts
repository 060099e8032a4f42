import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../test/helpers/poll.js';
import { type CompiledPrograms, compilePrograms } from '../test/helpers/programs.js';
import { ConfigError } from './config.js';
import {
  currentParentPid,
  processRunning,
  SUPERVISOR_PID_ENV,
  supervisorPid,
  watchSupervisor,
} from './supervisor-watch.js';

const started: ChildProcess[] = [];
/** Processes started by processes this file started (the watched programs). */
const grandchildren: number[] = [];

afterEach(() => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const pid of grandchildren.splice(0)) {
    if (processRunning(pid)) process.kill(pid, 'SIGKILL');
  }
});

/** Runs `script` under `sh -c` (stdout piped), resolves once it printed a line matching `ready`. */
async function shell(script: string, ready: RegExp, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'], env });
  started.push(child);
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = out.match(ready);
      if (m) resolve(m);
    });
    child.once('exit', (code) => reject(new Error(`sh exited ${code} before ${ready}: ${out}`)));
  });
  return { child, match };
}

describe('supervisorPid', () => {
  it('is undefined when SUPERVISOR_PID is unset or empty, the pid otherwise', () => {
    expect(supervisorPid({})).toBeUndefined();
    expect(supervisorPid({ [SUPERVISOR_PID_ENV]: '' })).toBeUndefined();
    expect(supervisorPid({ [SUPERVISOR_PID_ENV]: '4242' })).toBe(4242);
  });

  it.each(['abc', '0', '-1', '1.5', ' 12', '99999999999'])('rejects %j as a configuration error', (raw) => {
    expect(() => supervisorPid({ [SUPERVISOR_PID_ENV]: raw })).toThrow(ConfigError);
  });
});

describe('processRunning / currentParentPid', () => {
  it('sees this process and its parent, and not an ended child', async () => {
    expect(processRunning(process.pid)).toBe(true);
    expect(currentParentPid()).toBe(process.ppid);
    const child = spawn('true');
    started.push(child);
    await new Promise((r) => child.once('exit', r));
    expect(processRunning(child.pid as number)).toBe(false);
  });

  it('counts a zombie as ended', async () => {
    // `sleep 30` (exec'd by sh) is the parent of a short sleep and never reaps it.
    const { match } = await shell('sleep 0.1 & echo "zombie $!"; exec sleep 30', /zombie (\d+)\n/);
    const zombie = Number(match[1]);
    expect(processRunning(zombie)).toBe(true);
    await waitUntil(() => !processRunning(zombie), 5_000, 'the zombie to count as not running', 50);
    expect(() => process.kill(zombie, 0)).not.toThrow();
  });
});

describe('watchSupervisor', () => {
  it('calls onGone once when the watched process ends, and not before', async () => {
    const child = spawn('sleep', ['30']);
    started.push(child);
    let calls = 0;
    const stop = watchSupervisor(child.pid, () => calls++, 50);
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(0);
      child.kill('SIGKILL');
      await waitUntil(() => calls > 0, 2_000, 'the watcher to fire', 50);
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(1);
    } finally {
      stop();
    }
  });

  describe('in a program whose supervisor is SIGKILLed', () => {
    let programs: CompiledPrograms;
    let program: string;

    beforeAll(async () => {
      programs = await compilePrograms(['lib/test-support/watch-supervisor.ts']);
      program = programs.path('lib/test-support/watch-supervisor.ts');
    }, 120_000);

    afterAll(() => programs?.cleanup());

    /** `sh` plays the supervisor: starts the program in the background (optionally with SUPERVISOR_PID=$$) and waits. */
    async function supervised(withVariable: boolean) {
      const env = { ...process.env };
      delete env[SUPERVISOR_PID_ENV];
      const assign = withVariable ? `${SUPERVISOR_PID_ENV}=$$ ` : '';
      const { child, match } = await shell(
        `${assign}"${process.execPath}" "${program}" & wait`,
        /watching (\d+)\n/,
        env,
      );
      const pid = Number(match[1]);
      grandchildren.push(pid);
      return { supervisor: child, pid };
    }

    it('ends itself within a few seconds when SUPERVISOR_PID is set', async () => {
      const { supervisor, pid } = await supervised(true);
      await new Promise((r) => setTimeout(r, 500));
      expect(processRunning(pid)).toBe(true);
      supervisor.kill('SIGKILL');
      await waitUntil(() => !processRunning(pid), 5_000, 'the watched program to stop', 50);
    });

    it('keeps running without SUPERVISOR_PID (started by hand)', async () => {
      const { supervisor, pid } = await supervised(false);
      supervisor.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 1_500));
      expect(processRunning(pid)).toBe(true);
    });
  });
});

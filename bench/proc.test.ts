import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CpuMeter, ownCpu, processCpu, reapedChildrenCpu, treeCpu } from './proc.js';

/**
 * A reaper of its own: a Node process that starts a child doing a fixed amount of CPU work (about
 * half a second, whatever the load), waits for it, then idles until stdin closes. Measuring this
 * process rather than the test runner keeps other test files' CPU out of the counters.
 */
function reaper() {
  const busy = 'let x = 0; for (let i = 0; i < 4e8; i++) x += i % 7; if (x < 0) console.log(x);';
  const script = `const c = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(busy)}], { stdio: 'ignore' });
process.stdout.write('started\\n');
c.on('exit', (code) => { process.stdout.write('reaped ' + code + '\\n'); });
process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
  return spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
}

describe('CPU counters', () => {
  it('split a process’s own time from its reaped children’s', () => {
    const cpu = processCpu(process.pid);
    const tree = treeCpu(process.pid)();
    const after = processCpu(process.pid);
    expect(cpu?.own).toBeGreaterThan(0);
    expect(cpu?.children).toBeGreaterThanOrEqual(0);
    // read between the two, so within what the process used meanwhile
    expect(tree).toBeGreaterThanOrEqual((cpu?.own ?? 0) + (cpu?.children ?? 0));
    expect(tree).toBeLessThanOrEqual((after?.own ?? 0) + (after?.children ?? 0));
    expect(processCpu(2 ** 22 + 1)).toBeUndefined();
  });

  it('stopReaped waits for the children started during the measurement and counts them apart', async () => {
    const child = reaper();
    const pid = child.pid ?? 0;
    const meter = new CpuMeter({ own: ownCpu(pid), children: reapedChildrenCpu(pid) }, [pid]);
    let out = '';
    const waiting: Array<() => void> = [];
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      for (const wake of waiting.splice(0)) wake();
    });
    const lines = async (n: number) => {
      while (out.split('\n').length <= n) await new Promise<void>((r) => waiting.push(r));
    };
    // stopReaped waits until the reaper is back to the children it had (none): from 'started' on
    await lines(1);
    const use = await meter.stopReaped(60_000);
    await lines(2);
    expect(out).toBe('started\nreaped 0\n');
    child.stdin.end();
    // the busy child's own work, counted in its reaper's cutime+cstime (tick granularity 0.01 s)
    expect(use.processes.children).toBeGreaterThanOrEqual(0.1);
    // the reaper itself only started Node and waited (its start-up may precede the meter)
    expect(use.processes.own).toBeLessThan(use.processes.children ?? 0);
    expect(use.machine).toBeGreaterThanOrEqual(use.processes.children ?? 0);
  }, 90_000);
});

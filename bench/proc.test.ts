import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CpuMeter, ownCpu, processCpu, reapedChildrenCpu, treeCpu } from './proc.js';

/** A child that does a fixed amount of CPU work (a few tenths of a second, whatever the load), then exits. */
function busyChild() {
  const script = 'let x = 0; for (let i = 0; i < 3e8; i++) x += i % 7; if (x < 0) console.log(x);';
  return spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
}

describe('CPU counters', () => {
  it('split a process’s own time from its reaped children’s', () => {
    const cpu = processCpu(process.pid);
    expect(cpu?.own).toBeGreaterThan(0);
    expect(cpu?.children).toBeGreaterThanOrEqual(0);
    expect(treeCpu(process.pid)()).toBeCloseTo((cpu?.own ?? 0) + (cpu?.children ?? 0), 1);
    expect(processCpu(2 ** 22 + 1)).toBeUndefined();
  });

  it('stopReaped waits for the children started during the measurement and counts them apart', async () => {
    const meter = new CpuMeter({ own: ownCpu(process.pid), children: reapedChildrenCpu(process.pid) }, [
      process.pid,
    ]);
    const child = busyChild();
    const use = await meter.stopReaped(30_000);
    expect(child.exitCode).toBe(0);
    expect(use.processes.children).toBeGreaterThanOrEqual(0.1);
    expect(use.processes.own).toBeLessThan(use.processes.children ?? 0);
    expect(use.machine).toBeGreaterThanOrEqual(use.processes.children ?? 0);
  });
});

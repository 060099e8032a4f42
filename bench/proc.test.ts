import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CpuMeter, ownCpu, processCpu, reapedChildrenCpu, treeCpu } from './proc.js';

/** A child that burns about `ms` of CPU, then exits. */
function busyChild(ms: number) {
  return spawn(process.execPath, ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end) {}`], {
    stdio: 'ignore',
  });
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
    busyChild(300);
    const use = await meter.stopReaped(10_000);
    expect(use.processes.children).toBeGreaterThanOrEqual(0.2);
    expect(use.processes.own).toBeLessThan(0.2);
    expect(use.machine).toBeGreaterThanOrEqual(0.2);
  });
});

import { describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/poll.js';
import { listProcesses } from '../helpers/procs.js';
import { startStack } from '../helpers/stack.js';

/** Those of `pids` that still run (zombies, which have ended but are not reaped yet, are left out). */
function stillRunning(pids: number[]): number[] {
  const live = new Set(
    listProcesses()
      .filter((p) => p.state !== 'Z')
      .map((p) => p.pid),
  );
  return pids.filter((pid) => live.has(pid));
}

describe('stack main process killed with SIGKILL', () => {
  it('leaves no service behind: each notices its supervisor is gone and stops', async () => {
    const stack = await startStack();
    try {
      const pids = Object.values(stack.json.pids);
      expect(pids.length).toBeGreaterThanOrEqual(4);
      const procs = listProcesses();
      const parents = [...new Set(pids.map((pid) => procs.find((p) => p.pid === pid)?.ppid))];
      expect(parents).toHaveLength(1);
      const main = procs.find((p) => p.pid === parents[0]);
      expect(main?.cmdline).toContain('stack/main.js');
      expect(stillRunning(pids)).toEqual(pids);

      process.kill(main?.pid as number, 'SIGKILL');
      // Asserted before stack.stop(), which would kill the whole process group anyway.
      await waitUntil(() => stillRunning(pids).length === 0, 10_000, 'every service to end by itself', 100);
      expect(stillRunning(pids)).toEqual([]);
    } finally {
      await stack.stop();
    }
  }, 420_000);
});

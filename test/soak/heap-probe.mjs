// Loaded into every service of a soak stack by `NODE_OPTIONS=--import=<this file>`: every 5 s it
// writes the process's `process.memoryUsage()` and V8's heap spaces to `$SOAK_PROBE_DIR/<pid>.json`,
// which the soak's sampler reads beside /proc (the heap is not visible from outside). Test code only:
// no service imports it.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';

const dir = process.env.SOAK_PROBE_DIR;
if (dir) {
  const file = join(dir, `${process.pid}.json`);
  const write = () => {
    try {
      const spaces = {};
      // Committed (physical) bytes per space: what the heap holds in RSS, live or not.
      for (const s of getHeapSpaceStatistics()) spaces[s.space_name] = s.physical_space_size;
      writeFileSync(`${file}.tmp`, JSON.stringify({ at: Date.now(), ...process.memoryUsage(), spaces }));
      renameSync(`${file}.tmp`, file);
    } catch {
      // the soak's folder is gone: nothing to report to
    }
  };
  write();
  setInterval(write, 5_000).unref();
}

// Loaded into every service of a soak stack by `NODE_OPTIONS=--import=<this file>`: every 5 s it
// writes the process's `process.memoryUsage()` to `$SOAK_PROBE_DIR/<pid>.json`, which the soak's
// sampler reads beside /proc (heap is not visible from outside). Test code only: no service imports it.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.SOAK_PROBE_DIR;
if (dir) {
  const file = join(dir, `${process.pid}.json`);
  const write = () => {
    try {
      const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
      writeFileSync(`${file}.tmp`, JSON.stringify({ at: Date.now(), rss, heapUsed, heapTotal, external }));
      renameSync(`${file}.tmp`, file);
    } catch {
      // the soak's folder is gone: nothing to report to
    }
  };
  write();
  setInterval(write, 5_000).unref();
}

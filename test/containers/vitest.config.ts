import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:containers`: the compose world in real containers (test/containers/), apart from
 * `npm test`. One file at a time: the world has 19 containers on a machine of 2 cores.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/containers/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    fileParallelism: false,
    maxWorkers: 1,
    reporters: ['default'],
    // testcontainers' reaper image cannot be pulled here; the suite removes what it started itself
    env: { TESTCONTAINERS_RYUK_DISABLED: 'true' },
  },
});

import { defineConfig } from 'vitest/config';

/** `npm run soak`: one long test (its duration from SOAK_MINUTES; see test/soak/run.mjs). */
export default defineConfig({
  test: {
    include: ['test/soak/**/*.test.ts'],
    testTimeout: 24 * 3_600_000,
    hookTimeout: 600_000,
    maxWorkers: 1,
    reporters: ['default'],
  },
});

import { defineConfig } from 'vitest/config';

/** `npm run test:faults`: the fault matrix (not part of `npm test`; one stack, one attempt at a time). */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 900_000,
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
  },
});

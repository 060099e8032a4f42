import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // test/containers/ is `npm run test:containers` (real containers, its own config); test/faults/
    // is `npm run test:faults`, test/soak/ `npm run soak` and test/long/ `npm run test:long` (long
    // runs, their own configs)
    exclude: [
      'node_modules/**',
      'dist/**',
      'test/containers/**',
      'test/faults/**',
      'test/soak/**',
      'test/long/**',
    ],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    // End-to-end suites start whole stacks of processes; two cores cannot run many at once.
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});

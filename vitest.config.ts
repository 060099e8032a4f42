import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // test/containers/ is `npm run test:containers` (real containers, its own config)
    exclude: ['node_modules/**', 'dist/**', 'test/containers/**'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    // End-to-end suites start whole stacks of processes; two cores cannot run many at once.
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});

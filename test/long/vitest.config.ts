import { defineConfig } from 'vitest/config';

// `npm run test:long`: the kit's long edge cases through real edges (README "The rollouts,
// reproduced"), once in `.ci/run`; not part of `npm test`. One file at a time: the cases are timed
// against the edge's idle timeouts and must not share 2 cores with each other.
export default defineConfig({
  test: {
    include: ['test/long/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    reporters: ['default'],
  },
});

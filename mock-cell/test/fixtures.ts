/**
 * @file The old path of `../test-support/fixtures.ts`, kept while the bridge's test support still
 * imports it (`bridge/test-support/harness.ts`, `endless-gitaly.ts`, `bridge/test/memory.test.ts`).
 * Import `mock-cell/test-support/fixtures.js` instead; this file goes once they have switched.
 */
export * from '../test-support/fixtures.js';

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../lib/proto.js';
import { generateSchema, SCHEMAS } from '../../scripts/schemas.mjs';

/** The committed schemas are what the generator makes of their TypeScript types today. */
describe('published JSON Schemas', () => {
  for (const output of Object.keys(SCHEMAS)) {
    it(`${output} matches its type (npm run generate:schemas)`, () => {
      const committed: unknown = JSON.parse(readFileSync(join(projectRoot(), output), 'utf8'));
      const fresh: unknown = JSON.parse(generateSchema(output));
      expect(committed).toEqual(fresh);
    }, 30_000);
  }
});

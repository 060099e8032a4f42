#!/usr/bin/env node
// The published JSON Schemas, generated from their TypeScript types (`npm run generate:schemas`):
// schemas/topology.schema.json from lib/contracts/topology-file.ts `TopologyFile`, and
// schemas/stack.schema.json from lib/contracts/stack.ts `StackJson`, schemas/edge.schema.json from
// lib/contracts/edge-file.ts `EdgeFile`. Every JSDoc comment becomes a
// description. `test/unit/schemas.test.ts` regenerates them in memory and fails on any difference.
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGenerator } from 'ts-json-schema-generator';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Output file → source file and type name. */
export const SCHEMAS = {
  'schemas/topology.schema.json': { path: 'lib/contracts/topology-file.ts', type: 'TopologyFile' },
  'schemas/stack.schema.json': { path: 'lib/contracts/stack.ts', type: 'StackJson' },
  'schemas/edge.schema.json': { path: 'lib/contracts/edge-file.ts', type: 'EdgeFile' },
};

/** The text of one schema file (2-space JSON and a final newline, as biome formats it). */
export function generateSchema(output) {
  const { path, type } = SCHEMAS[output];
  const schema = createGenerator({
    path: join(root, path),
    tsconfig: join(root, 'tsconfig.json'),
    type,
    expose: 'export',
    topRef: true,
    jsDoc: 'extended',
    skipTypeCheck: true,
    additionalProperties: false,
  }).createSchema(type);
  const id = `https://gitlab.com/gitlab-cells-ssh/${output}`;
  return `${JSON.stringify({ $id: id, ...schema }, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const output of Object.keys(SCHEMAS)) {
    writeFileSync(join(root, output), generateSchema(output));
    process.stdout.write(`wrote ${output}\n`);
  }
}

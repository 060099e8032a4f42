import { join } from 'node:path';
import { projectRoot } from '../lib/proto.js';
import { regenerateReadme } from './readme.js';

/** `npm run bench:readme [-- <results.json>]`, see readme.ts; default bench/results/latest.json. */
const root = projectRoot();
const source = process.argv[2] ?? join(root, 'bench', 'results', 'latest.json');
regenerateReadme(root, source).then(
  (date) => process.stdout.write(`README.md "Performance" regenerated from ${source} (run ${date})\n`),
  (err: unknown) => {
    process.stderr.write(`bench:readme: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);

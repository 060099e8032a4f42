import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RESULTS } from './bench-data.js';
import type { BenchResults } from './results.js';

/**
 * Full runs of every workload write `latest.*` and a dated copy; quick runs `quick-latest.*` and
 * partial runs (`--only`) `partial-latest.*` (both ignored by git), so neither replaces the last full result.
 */
export async function writeResults(
  results: BenchResults,
  complete: boolean,
  markdown: string,
  profile: string | undefined,
): Promise<string[]> {
  await mkdir(RESULTS, { recursive: true });
  const json = `${JSON.stringify({ ...results, profile }, null, 2)}\n`;
  const md = `${markdown}${profile ? `\n**CPU profiles** (\`--profile\`)\n\n${profile}` : ''}`;
  const names =
    results.mode === 'quick'
      ? ['quick-latest']
      : complete
        ? ['latest', `${results.run.date.slice(0, 10)}-${results.run.commit.slice(0, 8)}`]
        : ['partial-latest'];
  const written: string[] = [];
  for (const name of names) {
    await writeFile(join(RESULTS, `${name}.json`), json);
    await writeFile(join(RESULTS, `${name}.md`), md);
    written.push(join(RESULTS, `${name}.{json,md}`));
  }
  return written;
}

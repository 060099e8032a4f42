import { Bench } from './bench.js';
import { type BenchOptions, parseArgs, USAGE, UsageError, WORKLOADS } from './options.js';
import { killTracked } from './proc.js';
import { ratioLines, renderMarkdown } from './report.js';
import type { BenchResults } from './results.js';
import { writeResults } from './results-files.js';
import { evaluate } from './targets.js';

/**
 * `npm run bench [-- --quick] [--profile] [--only …]`: every contender in the same run on the same
 * data — direct file://, a private OpenSSH, the cells path (router → bridge → Rails → Gitaly), the
 * bridge alone and the grpc-js floor — then a markdown table, JSON and the ratios that matter.
 * The run itself is `bench.ts`; this is the command: arguments, signals, the report written.
 */

/** Stops every process the benchmark started on SIGINT / SIGTERM, then exits 130. */
function stopOnSignals(bench: Bench): void {
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${sig}: stopping every process the benchmark started\n`);
    void bench
      .stopAll()
      .then(() => bench.removeRunDir())
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** Evaluates the targets, writes the results, prints the report; 1 when anything failed. */
async function report(
  bench: Bench,
  opts: BenchOptions,
  results: BenchResults,
  pids: Record<string, number>,
  started: number,
): Promise<number> {
  const profile = await bench.profiles(pids).catch((err: unknown) => {
    bench.failures.record('summarizing profiles', err);
    return undefined;
  });
  evaluate(results);
  const markdown = renderMarkdown(results);
  const written = await writeResults(results, opts.only.size === WORKLOADS.length, markdown, profile);
  process.stdout.write(`\n${markdown}\n`);
  if (profile) process.stdout.write(`CPU profiles:\n\n${profile}\n`);
  process.stdout.write(
    `Results: ${written.join(', ')} (${((Date.now() - started) / 1000).toFixed(0)} s)\n\n`,
  );
  for (const line of ratioLines(results)) process.stdout.write(`${line}\n`);
  const failures = bench.failures.failures;
  if (failures.length > 0) {
    process.stderr.write(
      `\n${failures.length} failure(s):\n${failures.map((f) => `  ✗ ${f.what}: ${f.error}`).join('\n')}\n`,
    );
    return 1;
  }
  return 0;
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message ? `${err.message}\n\n` : ''}${USAGE}\n`);
      return err.message ? 64 : 0;
    }
    throw err;
  }
  const bench = new Bench(opts);
  stopOnSignals(bench);
  const started = Date.now();
  let results: BenchResults;
  let pids: Record<string, number> = {};
  try {
    results = await bench.run();
    pids = bench.stackPids;
  } finally {
    pids = { ...pids, ...bench.stackPids };
    await bench.stopAll();
    await bench.removeRunDir();
  }
  return report(bench, opts, results, pids, started);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `benchmark error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    killTracked();
    process.exit(1);
  },
);

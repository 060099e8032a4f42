import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { projectRoot } from '../../lib/proto.js';
import { run } from '../helpers/run.js';
import { readStackJson, startStack } from '../helpers/stack.js';
import { renderSoak, rssSvg } from './report.js';
import { type Sample, sampleServices } from './sampler.js';
import { MIX, type OpResult, Workload } from './workload.js';

/**
 * The soak (`npm run soak -- --minutes N`, default 30): a steady mix of clones, fetches, pushes and
 * archives by several users on every cell that holds a project, refusals included, by `SOAK_WORKERS`
 * (default 2) workers, each pausing `SOAK_PAUSE_MS` (500) between operations. Every service is sampled
 * every `SOAK_SAMPLE_MS` (30 000). Writes `test/results/soak.md` and `soak-rss.svg` (or to
 * `SOAK_RESULTS_DIR`).
 */
const minutes = Number(process.env.SOAK_MINUTES ?? 30);
const workers = Number(process.env.SOAK_WORKERS ?? 2);
const pauseMs = Number(process.env.SOAK_PAUSE_MS ?? 500);
const sampleMs = Number(process.env.SOAK_SAMPLE_MS ?? 30_000);
const LIMIT_PERCENT = 10;

it(`soak: ${minutes} min of mixed git traffic, no errors, no growth over ${LIMIT_PERCENT} % after the warm-up`, async () => {
  const work = mkdtempSync(join(tmpdir(), 'soak-'));
  const probeDir = join(work, 'probe');
  mkdirSync(probeDir);
  const probe = pathToFileURL(join(projectRoot(), 'test', 'soak', 'heap-probe.mjs')).href;
  const stack = await startStack({ env: { NODE_OPTIONS: `--import=${probe}`, SOAK_PROBE_DIR: probeDir } });
  const startedAt = Date.now();
  const endAt = startedAt + minutes * 60_000;
  const samples: Sample[] = [];
  const results: OpResult[] = [];
  try {
    const pids = () => readStackJson(join(stack.dataDir, 'stack.json')).pids;
    const sampler = (async () => {
      for (;;) {
        samples.push(...sampleServices(pids(), probeDir, startedAt));
        if (Date.now() + sampleMs > endAt + sampleMs / 2) break;
        await sleep(Math.min(sampleMs, Math.max(0, endAt - Date.now())));
      }
    })();
    const workload = new Workload(stack, join(work, 'ops'));
    mkdirSync(join(work, 'ops'), { recursive: true });
    const loops = Array.from({ length: workers }, async (_, w) => {
      for (let i = w; Date.now() < endAt; i += workers) {
        results.push(await workload.run(MIX[i % MIX.length] as (typeof MIX)[number]));
        await sleep(pauseMs);
      }
    });
    await Promise.all([...loops, sampler]);

    const missing: string[] = [];
    for (const r of results) {
      if (!r.pushed) continue;
      const { bare, branch, sha } = r.pushed;
      const got = await run('git', [
        '--git-dir',
        bare,
        'rev-parse',
        '--verify',
        '-q',
        `refs/heads/${branch}`,
      ]);
      if (got.stdout.trim() !== sha) missing.push(`${branch} (${sha})`);
    }
    const svgName = 'soak-rss.svg';
    const { text, violations } = renderSoak({
      minutes,
      startedAt: new Date(startedAt).toISOString(),
      results,
      samples,
      steadyFrom: Math.min(5, minutes / 3),
      missingPushes: missing,
      svgName,
      limitPercent: LIMIT_PERCENT,
      sampleSeconds: sampleMs / 1000,
      workers,
    });
    const dir = process.env.SOAK_RESULTS_DIR ?? join(projectRoot(), 'test', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'soak.md'), text);
    writeFileSync(join(dir, svgName), rssSvg(samples, [...new Set(samples.map((s) => s.service))].sort()));
    writeFileSync(join(dir, 'soak-samples.json'), `${JSON.stringify(samples)}\n`);
    process.stdout.write(`\n${text}\nwritten to ${dir}\n`);
    expect(results.length).toBeGreaterThan(0);
    expect(violations).toEqual([]);
  } finally {
    await stack.stop();
    await rm(work, { recursive: true, force: true });
  }
});

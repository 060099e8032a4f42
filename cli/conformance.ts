/**
 * @file `gitlab-cells-ssh conformance`: runs the kit's checks against a router under test. With
 * `--world DIR` the world of that data folder (started with `up --topology conformance/world.json`),
 * else the kit starts its own world and, with no `--ssh`, tests this project's topology router.
 */

import { CHECKS } from '../conformance/checks/index.js';
import type { RouterUnderTest } from '../conformance/context.js';
import { reportTable, runChecks, writeReport } from '../conformance/runner.js';
import { KIT_TOPOLOGY } from '../conformance/world-plan.js';
import { startWorld } from '../fixture/index.js';
import type { StackJson } from '../lib/contracts/stack.js';
import { DEFAULT_TUNNEL_PROFILE, TUNNEL_PROFILE_NAMES } from '../lib/contracts/tunnel-profile.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './usage.js';
import { readStackJson } from './world-files.js';

/** Every release profile, the newest (the default) first. */
export const PROFILES = [
  DEFAULT_TUNNEL_PROFILE,
  ...TUNNEL_PROFILE_NAMES.filter((p) => p !== DEFAULT_TUNNEL_PROFILE),
];
export const EDGES = ['none'];

export interface ConformanceOptions {
  ssh?: string;
  http?: string;
  world?: string;
  only?: string;
  json?: string;
  profile?: string;
  edge?: string;
}

function choose(value: string | undefined, known: string[], flag: string): string {
  const v = value ?? (known[0] as string);
  if (!known.includes(v))
    throw new UsageError(`unknown ${flag} ${v} (this kit has: ${known.join(', ')})`, 'conformance');
  return v;
}

export async function conformance(o: ConformanceOptions): Promise<number> {
  const profile = choose(o.profile, PROFILES, '--profile');
  const edge = choose(o.edge, EDGES, '--edge');
  if (o.ssh !== undefined && !/^[^\s:]+:\d+$/.test(o.ssh))
    throw new UsageError(`--ssh must be host:port, not ${o.ssh}`, 'conformance');
  const only = o.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = (only ?? []).filter((id) => !CHECKS.some((c) => c.id === id));
  if (unknown.length > 0)
    throw new UsageError(
      `no check ${unknown.join(', ')} (this kit has: ${CHECKS.map((c) => c.id).join(', ')})`,
      'conformance',
    );
  const world = o.world === undefined ? await startWorld({ topology: KIT_TOPOLOGY }) : undefined;
  try {
    const stack: StackJson = world?.stackJson ?? readStackJson(o.world as string);
    const ours = stack.routerTopology ?? stack.router;
    const router: RouterUnderTest = {
      ssh: o.ssh ?? ours.ssh,
      ...(o.http !== undefined ? { http: o.http } : {}),
      ours: o.ssh === undefined || o.ssh === ours.ssh,
    };
    const report = await runChecks(stack, router, { ...(only ? { only } : {}), profile, edge });
    process.stdout.write(reportTable(report));
    if (o.json) writeReport(o.json, report);
    return report.failed > 0 ? EXIT_FAILED : EXIT_OK;
  } finally {
    await world?.stop();
  }
}

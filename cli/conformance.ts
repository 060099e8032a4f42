/**
 * @file `gitlab-cells-ssh conformance`: runs the kit's checks against a router under test. With
 * `--world DIR` the world of that data folder (started with `up --topology conformance/world.json`),
 * else the kit starts its own world and, with no `--ssh`, tests this project's topology router.
 */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CHECKS } from '../conformance/checks/index.js';
import type { RouterUnderTest } from '../conformance/context.js';
import { reportTable, runChecks, writeReport } from '../conformance/runner.js';
import { KIT_TOPOLOGY } from '../conformance/world-plan.js';
import { startWorld } from '../fixture/index.js';
import type { StackJson } from '../lib/contracts/stack.js';
import {
  DEFAULT_TUNNEL_PROFILE,
  TUNNEL_PROFILE_NAMES,
  type TunnelProfileName,
} from '../lib/contracts/tunnel-profile.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './usage.js';
import { readStackJson } from './world-files.js';

/** Every release profile, the newest (the default) first. */
export const PROFILES = [
  DEFAULT_TUNNEL_PROFILE,
  ...TUNNEL_PROFILE_NAMES.filter((p) => p !== DEFAULT_TUNNEL_PROFILE),
];
export const EDGES = ['none', 'nginx', 'haproxy', 'cloudflare'];

export interface ConformanceOptions {
  ssh?: string;
  http?: string;
  world?: string;
  only?: string;
  json?: string;
  profile?: string;
  edge?: string;
  edgeTimeScale?: string;
  /** Run the long edge cases whatever the edge's timeouts (`conformance/long-cases.ts`). */
  long?: boolean;
  /** GitLab's routes snapshot for H6 (`config/routing/gitlab_routes.json`). */
  routes?: string;
}

function choose(value: string | undefined, known: string[], flag: string, files = false): string {
  const v = value ?? (known[0] as string);
  if (!known.includes(v) && !(files && /\.json$/.test(v)))
    throw new UsageError(`unknown ${flag} ${v} (this kit has: ${known.join(', ')})`, 'conformance');
  return v;
}

export async function conformance(o: ConformanceOptions): Promise<number> {
  const profile = choose(o.profile, PROFILES, '--profile');
  const edge = choose(o.edge, EDGES, '--edge', true);
  const scale = o.edgeTimeScale === undefined ? undefined : Number(o.edgeTimeScale);
  if (scale !== undefined && !(scale > 0 && scale <= 10))
    throw new UsageError(
      `--edge-time-scale must be a number above 0 and at most 10, not ${o.edgeTimeScale}`,
      'conformance',
    );
  if (o.ssh !== undefined && !/^[^\s:]+:\d+$/.test(o.ssh))
    throw new UsageError(`--ssh must be host:port, not ${o.ssh}`, 'conformance');
  if (o.http !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(o.http))
    throw new UsageError(`--http must be a base URL (http://host:port), not ${o.http}`, 'conformance');
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
  if (o.routes !== undefined && !existsSync(o.routes))
    throw new UsageError(`--routes ${o.routes}: no such file`, 'conformance');
  const given = o.world === undefined ? undefined : readStackJson(o.world);
  const wanted = EDGES.includes(edge) ? edge : resolve(edge);
  if (given && o.edge !== undefined && worldEdge(given) !== wanted)
    throw new UsageError(`the world at ${o.world} runs edge ${worldEdge(given)}, not ${edge}`, 'conformance');
  const world =
    given === undefined
      ? await startWorld({
          topology: KIT_TOPOLOGY,
          // The kit's own world: this project's routers emit the profile under test.
          tunnelProfile: profile as TunnelProfileName,
          ...(edge === 'none' ? {} : { edge: wanted }),
          ...(scale === undefined ? {} : { edgeTimeScale: scale }),
        })
      : undefined;
  try {
    const stack: StackJson = world?.stackJson ?? (given as StackJson);
    const ours = stack.routerTopology ?? stack.router;
    // No --ssh and no --http: both fronts of the world's own router.
    const http = o.http?.replace(/\/$/, '') ?? (o.ssh === undefined ? ours.http : undefined);
    const router: RouterUnderTest = {
      ssh: o.ssh ?? ours.ssh,
      ...(http !== undefined ? { http } : {}),
      ours: (o.ssh === undefined || o.ssh === ours.ssh) && (o.http === undefined || o.http === ours.http),
    };
    const report = await runChecks(stack, router, {
      ...(only ? { only } : {}),
      profile,
      edge: worldEdge(stack),
      ...(o.long ? { long: true } : {}),
      ...(o.routes === undefined ? {} : { routes: resolve(o.routes) }),
    });
    process.stdout.write(reportTable(report));
    if (o.json) writeReport(o.json, report);
    return report.failed > 0 ? EXIT_FAILED : EXIT_OK;
  } finally {
    await world?.stop();
  }
}

/** The edge a world runs, as the report names it: its kind, or its edge file. */
function worldEdge(stack: StackJson): string {
  const e = stack.edge ?? { kind: 'none' };
  return e.kind === 'file' ? (e.file ?? 'file') : e.kind;
}

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Summaries of V8 CPU profiles (written by `cpu-profiler.ts`) of the stack's services: where the non-idle time
 * goes by area (GC, Node internals per module, each npm package, our own code) and the hottest functions.
 */
interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  service: string;
  pid: number;
  /** Wall time covered by the profile, seconds. */
  seconds: number;
  /** Non-idle CPU time sampled, seconds. */
  busySeconds: number;
  areas: Array<{ area: string; seconds: number; share: number }>;
  functions: Array<{ fn: string; seconds: number; share: number }>;
}

/** The area a frame belongs to: `(garbage collector)`, `node:http2`, `@grpc/grpc-js`, `bridge/`, … */
export function areaOf(frame: CpuProfileNode['callFrame']): string {
  const { functionName, url } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm?.[1]) return nm[1];
  if (url.startsWith('node:')) {
    const mod = url.slice(5).replace(/^internal\//, '');
    return `node:${mod.split('/')[0]?.replace(/\.js$/, '')}`;
  }
  const own = /\/dist\/([^/]+)\//.exec(url);
  return own?.[1] ? `${own[1]}/` : url;
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  return dist >= 0 ? url.slice(dist + 6) : url.replace(/^file:\/\//, '');
}

const IDLE = new Set(['(idle)', '(program)']);

export function summarizeProfile(
  profile: CpuProfile,
  service: string,
  pid: number,
  top = 12,
): ProfileSummary {
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  if (samples.length > 0 && deltas.length === samples.length) {
    // timeDeltas[i] is the time before sample i; attribute the gap after a sample to it.
    for (let i = 0; i < samples.length; i++) {
      const id = samples[i] as number;
      const dt = deltas[i + 1] ?? 0;
      selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
    }
  } else {
    const total = profile.endTime - profile.startTime;
    const hits = profile.nodes.reduce((a, n) => a + (n.hitCount ?? 0), 0) || 1;
    for (const n of profile.nodes) selfUs.set(n.id, ((n.hitCount ?? 0) / hits) * total);
  }
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let busy = 0;
  for (const n of profile.nodes) {
    const us = selfUs.get(n.id) ?? 0;
    if (us === 0 || IDLE.has(n.callFrame.functionName)) continue;
    busy += us;
    const area = areaOf(n.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const name = n.callFrame.url
      ? `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
      : n.callFrame.functionName;
    fns.set(name, (fns.get(name) ?? 0) + us);
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => ({ key: k, seconds: us / 1e6, share: busy > 0 ? us / busy : 0 }));
  return {
    service,
    pid,
    seconds: (profile.endTime - profile.startTime) / 1e6,
    busySeconds: busy / 1e6,
    areas: rank(areas).map(({ key, ...rest }) => ({ area: key, ...rest })),
    functions: rank(fns).map(({ key, ...rest }) => ({ fn: key, ...rest })),
  };
}

/** Summaries of the profiles in `dir` written by the named processes (file names carry the pid). */
export async function summarizeProfiles(
  dir: string,
  pids: Record<string, number>,
): Promise<ProfileSummary[]> {
  const byPid = new Map(Object.entries(pids).map(([name, pid]) => [pid, name]));
  const out: ProfileSummary[] = [];
  for (const file of (await readdir(dir)).sort()) {
    const m = /^(\d+)\.cpuprofile$/.exec(file);
    const service = m ? byPid.get(Number(m[1])) : undefined;
    if (!m || !service) continue;
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
    out.push(summarizeProfile(profile, service, Number(m[1])));
  }
  return out;
}

export function renderProfiles(summaries: readonly ProfileSummary[]): string {
  const lines: string[] = [];
  for (const s of summaries) {
    lines.push(
      `**${s.service}** (pid ${s.pid}): ${s.busySeconds.toFixed(1)} s busy of ${s.seconds.toFixed(1)} s profiled`,
      '',
      `- by area: ${s.areas.map((a) => `${a.area} ${(a.share * 100).toFixed(0)} %`).join(', ')}`,
      `- hottest: ${s.functions
        .slice(0, 8)
        .map((f) => `\`${f.fn}\` ${(f.share * 100).toFixed(1)} %`)
        .join(', ')}`,
      '',
    );
  }
  return lines.join('\n');
}

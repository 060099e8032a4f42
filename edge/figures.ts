/**
 * @file What an edge is made of: the kind (or the user's edge file, `lib/contracts/edge-file.ts`)
 * resolved to the proxy that runs and its figures, every time already multiplied by the time scale.
 * Sources of the figures: `../shared/docs/reference-cell.md` §1.5 (Cloudflare's ~15 s idle connection,
 * the ~60 s idle-body kill) and `field-notes.md` (GitLab.com's HAProxy `timeout client` 90 s).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { EdgeFile, EdgeKind, EdgeProxy } from '../lib/contracts/edge-file.js';
import { schemaValidator } from '../lib/json-schema.js';

export const EDGE_KINDS: readonly EdgeKind[] = ['none', 'nginx', 'haproxy', 'cloudflare'];

/** An edge that runs: its proxy and figures (times in ms, scaled). */
export interface EdgeFigures {
  proxy: EdgeProxy;
  timeScale: number;
  idleBodyTimeoutMs: number;
  idleTimeoutMs: number;
  haproxyTimeoutClientMs: number;
  haproxyTimeoutServerMs: number;
  bufferSshPackBody: boolean;
  bufferResponse: boolean;
  maxBodyBytes: number;
  upstreamConnectionClose: boolean;
}

/** An edge as the world starts it: `none`, or a kind / file with its figures. */
export type EdgeSpec =
  | { kind: 'none' }
  | { kind: Exclude<EdgeKind, 'none'> | 'file'; file?: string; figures: EdgeFigures };

type Unscaled = Omit<EdgeFigures, 'timeScale' | 'haproxyTimeoutClientMs' | 'haproxyTimeoutServerMs'> & {
  haproxyTimeoutClientMs?: number;
  haproxyTimeoutServerMs?: number;
};

/** The figures of each kind at time scale 1. */
const BASES: Record<Exclude<EdgeKind, 'none'>, Unscaled> = {
  // nginx's own defaults (60 s), streaming both ways as GitLab's nginx serves `ssh-*-pack` (gitlab#466160).
  nginx: {
    proxy: 'nginx',
    idleBodyTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    bufferSshPackBody: false,
    bufferResponse: false,
    maxBodyBytes: 0,
    upstreamConnectionClose: true,
  },
  // GitLab.com's HAProxy `timeout client` 90 s (field-notes.md, infrastructure#13548).
  haproxy: {
    proxy: 'haproxy',
    idleBodyTimeoutMs: 90_000,
    idleTimeoutMs: 90_000,
    bufferSshPackBody: false,
    bufferResponse: false,
    maxBodyBytes: 0,
    upstreamConnectionClose: true,
  },
  // Cloudflare in front of the cells (reference-cell.md §1.5): ~15 s idle connection, ~60 s idle body;
  // `*/ssh-*-pack` bodies streamed, as after production#22944 (an edge file with
  // `bufferSshPackBody: true` is the edge before that fix).
  cloudflare: {
    proxy: 'nginx',
    idleBodyTimeoutMs: 60_000,
    idleTimeoutMs: 15_000,
    bufferSshPackBody: false,
    bufferResponse: false,
    maxBodyBytes: 0,
    upstreamConnectionClose: true,
  },
};

/** A bad `--edge`, `STACK_EDGE` or edge file: every problem, one line each. */
export class EdgeFileError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid edge ${source}:\n${problems.join('\n')}`);
    this.name = 'EdgeFileError';
  }
}

/** The figures of `base` overridden by `file`, every time multiplied by the scale. */
export function edgeFigures(base: Exclude<EdgeKind, 'none'>, file: Partial<EdgeFile> = {}): EdgeFigures {
  const b = BASES[base];
  const scale = file.timeScale ?? 1;
  const t = (ms: number) => Math.max(1, Math.round(ms * scale));
  const idle = file.idleTimeoutMs ?? b.idleTimeoutMs;
  return {
    proxy: file.proxy ?? b.proxy,
    timeScale: scale,
    idleBodyTimeoutMs: t(file.idleBodyTimeoutMs ?? b.idleBodyTimeoutMs),
    idleTimeoutMs: t(idle),
    haproxyTimeoutClientMs: t(file.haproxyTimeoutClientMs ?? b.haproxyTimeoutClientMs ?? idle),
    haproxyTimeoutServerMs: t(file.haproxyTimeoutServerMs ?? b.haproxyTimeoutServerMs ?? idle),
    bufferSshPackBody: file.bufferSshPackBody ?? b.bufferSshPackBody,
    bufferResponse: file.bufferResponse ?? b.bufferResponse,
    maxBodyBytes: file.maxBodyBytes ?? b.maxBodyBytes,
    upstreamConnectionClose: file.upstreamConnectionClose ?? b.upstreamConnectionClose,
  };
}

/** Reads and checks an edge file (`schemas/edge.schema.json`); throws EdgeFileError naming every problem. */
export function loadEdgeFile(path: string): EdgeFile {
  const file = resolve(path);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new EdgeFileError(`file ${file}`, [`root: cannot read it as JSON (${(err as Error).message})`]);
  }
  const problems = schemaValidator('edge')(value);
  if (problems.length > 0) throw new EdgeFileError(`file ${file}`, problems);
  return value as EdgeFile;
}

/**
 * `--edge` / `STACK_EDGE`: a kind, or the path of an edge file (anything that is not a kind).
 * `timeScale` (`--edge-time-scale`) multiplies on top of a file's own.
 */
export function resolveEdge(value: string, timeScale = 1): EdgeSpec {
  if (!(timeScale > 0 && timeScale <= 10))
    throw new EdgeFileError(`time scale ${timeScale}`, ['root: the time scale must be > 0 and ≤ 10']);
  if (value === 'none') return { kind: 'none' };
  if ((EDGE_KINDS as readonly string[]).includes(value)) {
    const kind = value as Exclude<EdgeKind, 'none'>;
    return { kind, figures: edgeFigures(kind, { timeScale }) };
  }
  if (!/[./]/.test(value))
    throw new EdgeFileError(`"${value}"`, [
      `root: not an edge kind (${EDGE_KINDS.join(', ')}) nor the path of an edge file (*.json)`,
    ]);
  const file = loadEdgeFile(value);
  const figures = edgeFigures(file.base ?? 'nginx', {
    ...file,
    timeScale: (file.timeScale ?? 1) * timeScale,
  });
  return { kind: 'file', file: resolve(value), figures };
}

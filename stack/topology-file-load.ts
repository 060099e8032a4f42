import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { TopologyFile } from '../lib/contracts/topology-file.js';
import { schemaValidator } from '../lib/json-schema.js';
import { projectRoot } from '../lib/proto.js';
import { checkTopologyFile } from './topology-file-check.js';
import { resolveTopologyFile, type World } from './topology-file-resolve.js';

/** A topology file that cannot be started: every problem, one `<path in the file>: <what is wrong>` each. */
export class TopologyFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.join('\n')}`);
  }
}

/** The default world: `topologies/demo.json` of this package. */
export const DEMO_TOPOLOGY_FILE = join(projectRoot(), 'topologies', 'demo.json');

/**
 * Every problem of a parsed topology file (structure from `schemas/topology.schema.json`, then
 * meaning), `dir` being the folder relative paths in it are resolved against.
 */
export function topologyFileProblems(value: unknown, dir: string): string[] {
  const structure = schemaValidator('topology')(value);
  return structure.length > 0 ? structure : checkTopologyFile(value as TopologyFile, dir);
}

/** Reads, checks and resolves a topology file; throws TopologyFileError listing every problem. */
export function loadTopologyFile(path: string): World {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new TopologyFileError(file, [`root: cannot read the file (${(err as Error).message})`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TopologyFileError(file, [`root: not JSON (${(err as Error).message})`]);
  }
  const problems = topologyFileProblems(value, dirname(file));
  if (problems.length > 0) throw new TopologyFileError(file, problems);
  return resolveTopologyFile(value as TopologyFile, file, dirname(file));
}

let demo: World | undefined;

/** The demo world (`topologies/demo.json`), read once. */
export function demoWorld(): World {
  demo ??= loadTopologyFile(DEMO_TOPOLOGY_FILE);
  return demo;
}

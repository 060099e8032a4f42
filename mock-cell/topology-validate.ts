import { checkGeoSites } from './geo/topology.js';
import { Problems } from './topology-problems.js';
import { checkReferences } from './topology-references.js';
import { checkShape } from './topology-shape.js';
import type { Topology } from './topology-types.js';
import { checkUniqueness } from './topology-unique.js';

/**
 * Validates a parsed topology file: first the shape of every entry (types of fields,
 * `topology-shape.ts`), then the uniqueness of entries (`topology-unique.ts`) and the references
 * between them (`topology-references.ts`). Every problem names the entry and the field; all problems
 * are reported at once in one CELL_TOPOLOGY_INVALID error.
 */

/** Returns the value typed as a Topology, or throws CELL_TOPOLOGY_INVALID listing every problem. */
export function validateTopology(value: unknown): Topology {
  const p = new Problems();
  checkShape(value, p);
  p.throwIfAny();
  const topology = value as Topology;
  checkUniqueness(topology, p);
  checkReferences(topology, p);
  checkGeoSites(topology, p);
  p.throwIfAny();
  return topology;
}

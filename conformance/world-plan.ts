/**
 * @file The kit's own world (`conformance/world.json`): its names, so checks need no other file.
 */
import { join } from 'node:path';
import { projectRoot } from '../lib/proto.js';

/** The topology file the kit starts its world from (a legacy cell and two others). */
export const KIT_TOPOLOGY = join(projectRoot(), 'conformance', 'world.json');
export const KIT_USER = 'kit';
/** A project of a non-legacy cell, its top-level group and the cell that owns it. */
export const ROUTED = {
  project: 'north-group/north-project',
  group: 'north-group',
  cell: 'conf_north',
  org: 'north-org',
};
/** A project of the legacy cell. */
export const LEGACY_PROJECT = 'legacy-group/old-project';

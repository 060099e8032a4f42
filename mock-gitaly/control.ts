/** @file mock Gitaly's control ops on the world channel (`onControl('gitaly', …)`). */
import { onlyArgs } from '../lib/control-args.js';
import { onControl } from '../lib/world-channel.js';
import type { GitalyWorld } from './world.js';

/** Registers `fault`, `clearFaults` and `reset` for `world`. */
export function registerGitalyControls(world: GitalyWorld): void {
  onControl('gitaly', 'fault', (args) => world.faults.add(args));
  onControl('gitaly', 'clearFaults', (args) => world.faults.clear(args));
  onControl('gitaly', 'reset', (args) => {
    onlyArgs(args, []);
    world.faults.clear();
    return {};
  });
}

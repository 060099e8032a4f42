/** @file mock Gitaly's control ops on the world channel (`onControl('gitaly', …)`). */
import { onlyArgs } from '../lib/control-args.js';
import { ControlArgumentError, type ControlHandler, onControl } from '../lib/world-channel.js';
import type { GitalyWorld } from './world.js';

/** A request for another cell than this Gitaly's (a misrouted one) is refused rather than obeyed. */
function forThisCell(world: GitalyWorld, handler: ControlHandler): ControlHandler {
  return (args, cell) => {
    if (cell !== undefined && world.cell !== null && cell !== world.cell)
      throw new ControlArgumentError(`this mock Gitaly serves cell ${world.cell}, not ${cell}`);
    return handler(args, cell);
  };
}

/** Registers `fault`, `clearFaults` and `reset` for `world`. */
export function registerGitalyControls(world: GitalyWorld): void {
  onControl(
    'gitaly',
    'fault',
    forThisCell(world, (args) => world.faults.add(args)),
  );
  onControl(
    'gitaly',
    'clearFaults',
    forThisCell(world, (args) => world.faults.clear(args)),
  );
  onControl(
    'gitaly',
    'reset',
    forThisCell(world, (args) => {
      onlyArgs(args, []);
      world.faults.clear();
      return {};
    }),
  );
}

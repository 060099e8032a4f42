/** @file mock Gitaly's control ops on the world channel (`onControl('gitaly', …)`). */
import { ConfigError } from '../lib/config.js';
import { onlyArgs } from '../lib/control-args.js';
import { ControlArgumentError, type ControlHandler, onControl } from '../lib/world-channel.js';
import { type ConcurrencyLimit, concurrencyValidator } from './concurrency.js';
import type { GitalyWorld } from './world.js';

/** A request for another cell than this Gitaly's (a misrouted one) is refused rather than obeyed. */
function forThisCell(world: GitalyWorld, handler: ControlHandler): ControlHandler {
  return (args, cell) => {
    if (cell !== undefined && world.cell !== null && cell !== world.cell)
      throw new ControlArgumentError(`this mock Gitaly serves cell ${world.cell}, not ${cell}`);
    return handler(args, cell);
  };
}

/** `{limits: [...]}`, each as the topology file's `gitaly.concurrency` entries. */
function limitsOf(args: Record<string, unknown>): ConcurrencyLimit[] {
  onlyArgs(args, ['limits']);
  if (!Array.isArray(args.limits))
    throw new ControlArgumentError('limits must be a list (empty: nothing limited)');
  try {
    return concurrencyValidator(args.limits, 'limits');
  } catch (err) {
    if (err instanceof ConfigError) throw new ControlArgumentError(err.message);
    throw err;
  }
}

/** Registers `fault`, `clearFaults`, `concurrency` and `reset` for `world`. */
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
    'concurrency',
    forThisCell(world, (args) => {
      const limits = limitsOf(args);
      world.limiter.setLimits(limits);
      return { limits };
    }),
  );
  onControl(
    'gitaly',
    'reset',
    forThisCell(world, (args) => {
      onlyArgs(args, []);
      world.faults.clear();
      world.limiter.setLimits(world.configuredLimits);
      return {};
    }),
  );
}

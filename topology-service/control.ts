/** @file The Topology Service's control ops on the world channel (`onControl('topology-service', …)`). */
import { onControl } from '../lib/world-channel.js';
import type { TopologyWorld } from './world.js';

/** Registers `answer`, `failNext`, `latency`, `requestShape` and `reset` for `world`. */
export function registerTopologyControls(world: TopologyWorld): void {
  onControl('topology-service', 'answer', (args) => world.answer(args));
  onControl('topology-service', 'failNext', (args) => world.failNext(args));
  onControl('topology-service', 'latency', (args) => world.latency(args));
  onControl('topology-service', 'requestShape', (args) => world.requestShape(args));
  onControl('topology-service', 'reset', (args) => world.reset(args));
}

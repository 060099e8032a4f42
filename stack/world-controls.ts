/**
 * @file Which control targets (`lib/contracts/world.ts`) each planned process answers: its
 * `ServiceSpec.controls` when the plan set them, else derived from the demo stack's names (the mock
 * cell `mock-cell` serves `rails` of every cell it listens for, `gitaly-<cell>` the `gitaly` of that
 * cell, `bridge-<cell>` its `bridge`, `topology-service` the Topology Service). Geo secondaries'
 * processes get no cell target: a control call for a cell reaches its primary only.
 */
import type { PlannedService } from './stack-config.js';
import type { ServiceSpec } from './supervisor.js';

type Controls = NonNullable<ServiceSpec['controls']>;

function railsCells(config: Record<string, unknown>): string[] {
  const listen = config.listen;
  if (!Array.isArray(listen)) return [];
  return listen.flatMap((l: unknown) => {
    const cell = (l as { cell?: unknown } | null)?.cell;
    return typeof cell === 'string' ? [cell] : [];
  });
}

function derive(p: PlannedService, cells: ReadonlySet<string>): Controls {
  const { name, service } = p.spec;
  if (service === 'topology-service') return [{ target: 'topology-service' }];
  if (service === 'mock-cell' && name === 'mock-cell')
    return railsCells(p.config).map((cell) => ({ target: 'rails', cell }));
  const cell = name.slice(name.indexOf('-') + 1);
  if (service === 'mock-gitaly' && name.startsWith('gitaly-') && cells.has(cell))
    return [{ target: 'gitaly', cell }];
  if (service === 'bridge' && name.startsWith('bridge-') && cells.has(cell))
    return [{ target: 'bridge', cell }];
  return [];
}

/** `planned` with every spec's `controls` filled (kept where the plan set them). */
export function withControls(planned: PlannedService[]): PlannedService[] {
  const main = planned.find((p) => p.spec.name === 'mock-cell');
  const cells = new Set(main ? railsCells(main.config) : []);
  return planned.map((p) =>
    p.spec.controls !== undefined ? p : { ...p, spec: { ...p.spec, controls: derive(p, cells) } },
  );
}

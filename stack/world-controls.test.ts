import { describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config.js';
import { LOCAL_NET, stackPaths, stackPorts } from './layout.js';
import { planServices } from './stack-config.js';
import { demoWorld } from './topology-file-load.js';
import { worldArgs } from './world-args.js';
import { withControls } from './world-controls.js';

describe('withControls', () => {
  const planned = withControls(
    planServices(demoWorld(), stackPaths('/tmp/x'), stackPorts(0), LOCAL_NET, 'info', {
      topology: true,
      geo: true,
    }),
  );
  const of = (name: string) => planned.find((p) => p.spec.name === name)?.spec.controls;

  it('derives the targets of the demo plan from its names', () => {
    expect(of('mock-cell')).toEqual(
      ['cell_us0', 'cell_us1', 'cell_eu0', 'cell_eu1'].map((cell) => ({ target: 'rails', cell })),
    );
    expect(of('gitaly-cell_eu0')).toEqual([{ target: 'gitaly', cell: 'cell_eu0' }]);
    expect(of('bridge-cell_us1')).toEqual([{ target: 'bridge', cell: 'cell_us1' }]);
    expect(of('topology-service')).toEqual([{ target: 'topology-service' }]);
    expect(of('router')).toEqual([]);
  });

  it('gives the Geo secondary no cell target, and keeps controls a plan set', () => {
    const geo = planned.filter(
      (p) => /geo|secondary/.test(p.spec.name) || p.spec.name.startsWith('mock-cell-'),
    );
    expect(geo.length).toBeGreaterThan(0);
    for (const p of geo) expect(p.spec.controls).toEqual([]);
    const set = withControls([
      { ...planned[0], spec: { ...planned[0]!.spec, controls: [{ target: 'bridge', cell: 'c' }] } } as never,
    ]);
    expect(set[0]?.spec.controls).toEqual([{ target: 'bridge', cell: 'c' }]);
  });
});

describe('worldArgs', () => {
  it('reads --parent-pid, WORLD_PARENT_PID and --ephemeral', () => {
    expect(worldArgs(['node', 'main.js', '--parent-pid', '42', '--ephemeral'], {})).toEqual({
      parentPid: 42,
      ephemeral: true,
    });
    expect(worldArgs(['node', 'main.js'], { WORLD_PARENT_PID: '7' })).toEqual({
      parentPid: 7,
      ephemeral: false,
    });
    expect(worldArgs(['node', 'main.js'], {})).toEqual({ ephemeral: false });
  });

  it('refuses a parent that is not a pid', () => {
    expect(() => worldArgs(['--parent-pid', 'x'], {})).toThrow(ConfigError);
    expect(() => worldArgs(['--parent-pid'], {})).toThrow(ConfigError);
    expect(() => worldArgs([], { WORLD_PARENT_PID: '-1' })).toThrow(ConfigError);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import type { RouteSource } from '../../lib/contracts/learn.js';
import { CellDirectory } from '../cells/directory.js';
import type { CellConfig } from '../config.js';
import type { Classification } from '../routing/classifier.js';
import { decideCell, type RoutingRuleResult } from './decide.js';

const CELLS: CellConfig[] = [
  { id: 1, name: 'cell_us0', legacy: true, region: 'us', url: 'http://127.0.0.1:4001' },
  { id: 2, name: 'cell_us1', legacy: false, region: 'us', url: 'http://127.0.0.1:4002' },
  { id: 3, name: 'cell_eu0', legacy: false, region: 'eu', url: 'https://eu0.example.com' },
];
const cells = new CellDirectory(CELLS, 'us');
afterAll(() => cells.close());

const cell = (name: string) => cells.get(name) as CellConfig;
const route = (name: string, source: RouteSource, via: Classification['via'] = 'learn'): Classification => ({
  cell: cell(name),
  source,
  via,
});
const classify = (type: 'CELL_ID' | 'SESSION_PREFIX' | 'FIRST_CELL', value: string): RoutingRuleResult => ({
  kind: 'classify',
  type,
  value,
  ruleId: 'r',
  action: 'classify',
});

describe('decideCell', () => {
  it('lets a path that decides its cell win over any rule', () => {
    for (const source of ['routable', 'fixed'] as const) {
      expect(decideCell(classify('CELL_ID', '3'), route('cell_us1', source), cells)).toEqual({
        cell: cell('cell_us1'),
        by: 'path',
      });
    }
  });

  it('takes the cell a rule names for fallback paths and failed learns', () => {
    expect(decideCell(classify('CELL_ID', '3'), route('cell_us0', 'fallback'), cells)).toEqual({
      cell: cell('cell_eu0'),
      by: 'rule',
    });
    expect(
      decideCell(classify('SESSION_PREFIX', 'cell-2'), route('cell_us0', 'fallback', 'fallback'), cells),
    ).toEqual({ cell: cell('cell_us1'), by: 'rule' });
    expect(decideCell(classify('FIRST_CELL', ''), route('cell_us0', 'fallback'), cells)).toEqual({
      cell: cell('cell_us0'),
      by: 'rule',
    });
  });

  it('routes proxy rules to the cell at their address, or to the legacy cell without one', () => {
    const proxy = (address?: string): RoutingRuleResult => ({
      kind: 'proxy',
      ruleId: 'p',
      action: 'proxy',
      ...(address === undefined ? {} : { address }),
    });
    expect(decideCell(proxy('eu0.example.com:443'), route('cell_us0', 'fallback'), cells).cell.name).toBe(
      'cell_eu0',
    );
    expect(decideCell(proxy('127.0.0.1:4002'), route('cell_us0', 'fallback'), cells).cell.name).toBe(
      'cell_us1',
    );
    expect(decideCell(proxy(), route('cell_us0', 'fallback'), cells)).toEqual({
      cell: cell('cell_us0'),
      by: 'rule',
    });
  });

  it('falls back to the answered (legacy) cell, saying why, when the rule names no known cell', () => {
    expect(decideCell(classify('CELL_ID', '9'), route('cell_us0', 'fallback'), cells)).toEqual({
      cell: cell('cell_us0'),
      by: 'legacy',
      ignoredRule: 'cell id 9 is not a configured cell',
    });
    expect(decideCell(classify('SESSION_PREFIX', '2'), route('cell_us0', 'fallback'), cells)).toMatchObject({
      by: 'legacy',
      ignoredRule: 'SESSION_PREFIX value is not a cell id',
    });
    expect(decideCell({ kind: 'none' }, route('cell_us0', 'fallback'), cells)).toEqual({
      cell: cell('cell_us0'),
      by: 'legacy',
    });
  });
});

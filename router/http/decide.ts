import type { CellDirectory } from '../cells/directory.js';
import type { CellConfig } from '../config.js';
import type { Classification } from '../routing/classifier.js';
import { classifiedCellId } from '../rules/http.js';
import type { RuleResult } from '../rules/types.js';

/**
 * Which cell the HTTP front sends a request to, from the rule engine's result and the path's
 * classification (learn answer, cached or fresh):
 *
 * 1. a path that decides its cell (learn `routable` or `fixed`) wins;
 * 2. otherwise (`fallback`, or learning failed) the cell a rule names: `CELL_ID` / `SESSION_PREFIX`
 *    by cell id, `FIRST_CELL` the legacy cell (cell 1, the first cell), `proxy` the cell at
 *    `proxy.address` or the legacy cell;
 * 3. otherwise the cell the learn answer named (the legacy cell).
 *
 * A `reject` never gets here: the front answers 400 before learning.
 */
export type DecidedBy = 'path' | 'rule' | 'legacy';

export interface RouteDecision {
  cell: CellConfig;
  by: DecidedBy;
  /** Why a rule's choice was not used (a cell id the router does not know). */
  ignoredRule?: string;
}

export type RoutingRuleResult = Exclude<RuleResult, { kind: 'reject' }>;

export function decideCell(
  rule: RoutingRuleResult,
  route: Classification,
  cells: CellDirectory,
): RouteDecision {
  if (route.source !== 'fallback') return { cell: route.cell, by: 'path' };
  const legacy: RouteDecision = { cell: route.cell, by: 'legacy' };
  switch (rule.kind) {
    case 'none':
      return legacy;
    case 'proxy': {
      const cell = rule.address === undefined ? cells.legacy : cells.byAddress(rule.address);
      return cell ? { cell, by: 'rule' } : { ...legacy, ignoredRule: `no cell at ${rule.address}` };
    }
    case 'classify': {
      if (rule.type === 'FIRST_CELL') return { cell: cells.legacy, by: 'rule' };
      const id = classifiedCellId(rule);
      const cell = id === undefined ? undefined : cells.byId(id);
      if (cell) return { cell, by: 'rule' };
      return {
        ...legacy,
        ignoredRule:
          id === undefined ? `${rule.type} value is not a cell id` : `cell id ${id} is not a configured cell`,
      };
    }
  }
}

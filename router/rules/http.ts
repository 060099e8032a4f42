import type { ClassifyType, RuleResult } from './types.js';

/**
 * What the HTTP front needs around the engine: the request cookies, the headers it adds to a
 * proxied request (http-router MR 190), and the cell id a classification names.
 */

export const RULE_ACTION_HEADER = 'X-GitLab-HTTP-Router-Rule-Action';
export const RULE_TYPE_HEADER = 'X-GitLab-HTTP-Router-Rule-Type';

const TYPE_HEADER_VALUES: Record<ClassifyType, string> = {
  CELL_ID: 'CellId',
  SESSION_PREFIX: 'SessionPrefix',
  FIRST_CELL: 'FirstCell',
};

/** Headers to add to the proxied request for a rule decision (none for `none`/`reject`). */
export function ruleHeaders(result: RuleResult): Record<string, string> {
  if (result.kind === 'proxy') return { [RULE_ACTION_HEADER]: 'proxy' };
  if (result.kind === 'classify') {
    return { [RULE_ACTION_HEADER]: 'classify', [RULE_TYPE_HEADER]: TYPE_HEADER_VALUES[result.type] };
  }
  return {};
}

/** The session prefix Rails writes when `cell.id` is set: `cell-<id>` (cells-routing.md §2.5). */
const SESSION_PREFIX = /^cell-(\d{1,15})$/;

/**
 * The numeric cell id a classification names: `CELL_ID` values are decimal ids, `SESSION_PREFIX`
 * values are `cell-<id>`. Undefined for FIRST_CELL and values of another shape.
 */
export function classifiedCellId(result: RuleResult): number | undefined {
  if (result.kind !== 'classify') return undefined;
  const digits =
    result.type === 'CELL_ID' ? /^\d{1,15}$/.exec(result.value)?.[0] : SESSION_PREFIX.exec(result.value)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

/** Parses a `Cookie` header; the first occurrence of a name wins. Values are not URL-decoded. */
export function parseCookies(header: string | readonly string[] | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  const lines = header === undefined ? [] : typeof header === 'string' ? [header] : header;
  for (const line of lines) {
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1) continue;
      const name = pair.slice(0, eq).trim();
      let value = pair.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (name !== '' && !Object.hasOwn(cookies, name)) cookies[name] = value;
    }
  }
  return cookies;
}

/**
 * The HTTP Router rule schema (seed 003, cells-routing.md §1.3) as this engine reads it. A ruleset
 * file is a JSON array of rules, evaluated top to bottom; the first rule that matches, transforms,
 * validates and yields a decision wins.
 */

/**
 * `authorization-basic`: the password of `Authorization: Basic <base64(login:password)>` (Git over
 * HTTP sends its token there), as http-router's `session_token_header_authorization_basic_*` rules.
 */
export const MATCH_TYPES = ['header', 'cookie', 'path', 'authorization-basic'] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

export const TRANSFORM_TYPES = ['routable-token-payload'] as const;
export type TransformType = (typeof TRANSFORM_TYPES)[number];

/** Topology Service `ClassifyType` names. */
export const CLASSIFY_TYPES = ['CELL_ID', 'SESSION_PREFIX', 'FIRST_CELL'] as const;
export type ClassifyType = (typeof CLASSIFY_TYPES)[number];

export const ACTIONS = ['classify', 'proxy'] as const;
export type RuleAction = (typeof ACTIONS)[number];

export interface RuleMatch {
  type: MatchType;
  /** Header name (case-insensitive) or cookie name (exact); not used by `path` and `authorization-basic`. */
  name?: string;
  /** JavaScript regular expression; its named groups become `${group}` interpolations. */
  regexValue: string;
}

export interface RuleTransform {
  type: TransformType;
  /** `routable-token-payload`: `["${payload}", "${payload_length}"]`. */
  input: string[];
  /** Name the result is addressed by: `${<output>.c}`. */
  output: string;
}

export interface Rule {
  id: string;
  /** Absent: the rule matches every request (a catch-all such as `{"id":"…","action":"proxy"}`). */
  match?: RuleMatch;
  transform?: RuleTransform;
  /** Interpolations that must be non-empty, else the rule does not apply. */
  validate?: { exist: string[] };
  action: RuleAction;
  /** Required when `action` is `classify`; `value` is required except for FIRST_CELL. */
  classify?: { type: ClassifyType; value?: string };
  /** Optional fixed upstream for `proxy`; without it the router proxies to the legacy cell. */
  proxy?: { address: string };
}

/** What the engine looks at. Header names may be in any case; cookies are already parsed. */
export interface RuleRequest {
  method: string;
  /** Request path; a query string, if present, is ignored. */
  path: string;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  cookies: Readonly<Record<string, string>>;
}

export type RuleResult =
  | { kind: 'classify'; type: ClassifyType; value: string; ruleId: string; action: 'classify' }
  | { kind: 'proxy'; ruleId: string; action: 'proxy'; address?: string }
  | { kind: 'reject'; status: 400; ruleId: string; message: string }
  | { kind: 'none' };

import { decodeRoutablePayload, RoutableTokenError } from '../../lib/routable-token.js';
import { render, type Scope } from './interpolate.js';
import type { CompiledRule, Ruleset } from './load.js';
import type { RuleRequest, RuleResult } from './types.js';

/**
 * Evaluates a ruleset against a request, top to bottom; the first rule that yields a decision wins.
 * Per rule: match → transform → validate → decide. A rule "does not apply" (evaluation moves on)
 * when its match fails, when a `validate.exist` entry or the classify value renders empty. A token
 * that matches a rule's regex but cannot be decoded is the client's fault: `reject` 400.
 */

type Headers = RuleRequest['headers'];

function headerValues(headers: Headers, name: string): readonly string[] {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return typeof value === 'string' ? [value] : value;
  }
  return [];
}

function subjects(match: NonNullable<CompiledRule['match']>, req: RuleRequest): readonly string[] {
  switch (match.type) {
    case 'header':
      return headerValues(req.headers, match.name as string);
    case 'cookie': {
      const name = match.name as string;
      return Object.hasOwn(req.cookies, name) ? [req.cookies[name] as string] : [];
    }
    case 'path':
      return [req.path.split('?')[0] ?? ''];
    case 'authorization-basic':
      return headerValues(req.headers, 'authorization').flatMap(basicPassword);
  }
}

/** The password of `Basic <base64(login:password)>`; nothing for another scheme or no colon. */
function basicPassword(value: string): string[] {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value);
  if (!m?.[1]) return [];
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon === -1 ? [] : [text.slice(colon + 1)];
}

/** The named groups of the first subject the rule's regex matches; undefined when none matches. */
function matchGroups(rule: CompiledRule, req: RuleRequest): Record<string, string | undefined> | undefined {
  if (!rule.match) return {};
  for (const subject of subjects(rule.match, req)) {
    const m = rule.match.regex.exec(subject);
    if (m) return { ...m.groups };
  }
  return undefined;
}

type Step = { result: RuleResult } | 'skip';

function evaluateRule(rule: CompiledRule, req: RuleRequest): Step {
  const groups = matchGroups(rule, req);
  if (!groups) return 'skip';
  const scope: Scope = { groups, outputs: {} };
  const id = rule.rule.id;
  if (rule.transform) {
    const [payload, length] = rule.transform.input.map((t) => render(t, scope)) as [string, string];
    try {
      scope.outputs = { [rule.transform.output]: decodeRoutablePayload(payload, length).fields };
    } catch (err) {
      if (!(err instanceof RoutableTokenError)) throw err;
      return {
        result: {
          kind: 'reject',
          status: 400,
          ruleId: id,
          message: `malformed routable token: ${err.message}`,
        },
      };
    }
  }
  if (rule.exist.some((t) => render(t, scope) === '')) return 'skip';
  if (!rule.classify) {
    const address = rule.rule.proxy?.address;
    return {
      result: { kind: 'proxy', ruleId: id, action: 'proxy', ...(address === undefined ? {} : { address }) },
    };
  }
  const value = rule.classify.value ? render(rule.classify.value, scope) : '';
  if (rule.classify.value && value === '') return 'skip';
  return { result: { kind: 'classify', type: rule.classify.type, value, ruleId: id, action: 'classify' } };
}

/** First decision of the ruleset for this request; `{kind: 'none'}` when no rule applies. */
export function evaluate(ruleset: Ruleset, req: RuleRequest): RuleResult {
  for (const rule of ruleset.rules) {
    const step = evaluateRule(rule, req);
    if (step !== 'skip') return step.result;
  }
  return { kind: 'none' };
}

import { readFileSync } from 'node:fs';
import { ConfigError } from '../../lib/config.js';
import { parseTemplate, references, type Template } from './interpolate.js';
import {
  ACTIONS,
  CLASSIFY_TYPES,
  type ClassifyType,
  MATCH_TYPES,
  type Rule,
  type RuleMatch,
  TRANSFORM_TYPES,
} from './types.js';

/** A ruleset that cannot be used; the message names the rule (by id or index) and the field. */
export class RulesetError extends ConfigError {
  constructor(
    message: string,
    /** Id of the offending rule, when it has one. */
    readonly ruleId?: string,
    /** Dotted field path inside the rule, e.g. `match.regexValue`. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'RulesetError';
  }
}

/** A validated rule with its regular expression compiled and its templates parsed. */
export interface CompiledRule {
  rule: Rule;
  match?: { type: RuleMatch['type']; name?: string; regex: RegExp };
  transform?: { input: [Template, Template]; output: string };
  exist: Template[];
  classify?: { type: ClassifyType; value?: Template };
}

export interface Ruleset {
  rules: readonly CompiledRule[];
}

const RULE_ID = /^[A-Za-z0-9_.-]+$/;
const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Reads fields of one rule and reports problems as `rule "<id>": <field> …`. */
class RuleReader {
  constructor(
    private readonly label: string,
    private readonly id: string | undefined,
  ) {}

  fail(field: string, problem: string): never {
    throw new RulesetError(`${this.label}: ${field} ${problem}`, this.id, field);
  }

  object(parent: Json, key: string, field: string, required: boolean): Json | undefined {
    const v = parent[key];
    if (v === undefined && !required) return undefined;
    if (!isObject(v)) this.fail(field, required ? 'is required and must be an object' : 'must be an object');
    return v;
  }

  string(parent: Json, key: string, field: string, required = true): string | undefined {
    const v = parent[key];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || v === '') this.fail(field, 'must be a non-empty string');
    return v;
  }

  oneOf<T extends string>(parent: Json, key: string, field: string, values: readonly T[]): T {
    const v = parent[key];
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
      this.fail(
        field,
        `must be one of ${values.map((x) => JSON.stringify(x)).join(', ')}, got ${JSON.stringify(v)}`,
      );
    }
    return v as T;
  }

  stringArray(parent: Json, key: string, field: string): string[] {
    const v = parent[key];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) {
      this.fail(field, 'must be an array of non-empty strings');
    }
    return v as string[];
  }

  known(obj: Json, field: string, keys: readonly string[]): void {
    for (const k of Object.keys(obj)) {
      if (!keys.includes(k)) {
        const where = field === '' ? k : `${field}.${k}`;
        this.fail(where, `is not a known field (known: ${keys.join(', ')})`);
      }
    }
  }

  template(source: string, field: string): Template {
    try {
      return parseTemplate(source);
    } catch (err) {
      return this.fail(field, `is not a valid interpolation: ${(err as Error).message}`);
    }
  }
}

/** Names of the named groups of a regular expression. */
function groupNames(regex: RegExp): string[] {
  // An alternative that matches the empty string exposes every group name (all undefined).
  const probe = new RegExp(`${regex.source}|`).exec('');
  return Object.keys(probe?.groups ?? {});
}

function compileMatch(r: RuleReader, raw: Json): CompiledRule['match'] {
  const m = r.object(raw, 'match', 'match', false);
  if (!m) return undefined;
  r.known(m, 'match', ['type', 'name', 'regexValue']);
  const type = r.oneOf(m, 'type', 'match.type', MATCH_TYPES);
  const unnamed = type === 'path' || type === 'authorization-basic';
  const name = r.string(m, 'name', 'match.name', !unnamed);
  if (unnamed && name !== undefined) r.fail('match.name', `is not used by a ${type} match`);
  const source = r.string(m, 'regexValue', 'match.regexValue') as string;
  let regex: RegExp;
  try {
    regex = new RegExp(source);
  } catch (err) {
    return r.fail('match.regexValue', `is not a valid regular expression: ${(err as Error).message}`);
  }
  return {
    type,
    ...(name === undefined ? {} : { name: type === 'header' ? name.toLowerCase() : name }),
    regex,
  };
}

function compileTransform(r: RuleReader, raw: Json): CompiledRule['transform'] {
  const t = r.object(raw, 'transform', 'transform', false);
  if (!t) return undefined;
  r.known(t, 'transform', ['type', 'input', 'output']);
  r.oneOf(t, 'type', 'transform.type', TRANSFORM_TYPES);
  const input = r.stringArray(t, 'input', 'transform.input');
  if (input.length !== 2) {
    r.fail('transform.input', `must be ["\${payload}", "\${payload_length}"] for routable-token-payload`);
  }
  const output = r.string(t, 'output', 'transform.output') as string;
  if (!OUTPUT_NAME.test(output))
    r.fail('transform.output', `must be a plain name, got ${JSON.stringify(output)}`);
  return {
    input: [
      r.template(input[0] as string, 'transform.input[0]'),
      r.template(input[1] as string, 'transform.input[1]'),
    ],
    output,
  };
}

/** Every `${…}` must name a group of the match or a field of the transform output. */
function checkReferences(r: RuleReader, compiled: CompiledRule, templates: [string, Template][]): void {
  const groups = compiled.match ? groupNames(compiled.match.regex) : [];
  const output = compiled.transform?.output;
  for (const [field, template] of templates) {
    for (const ref of references(template)) {
      if (ref.field === undefined) {
        if (!groups.includes(ref.head)) {
          r.fail(field, `references \${${ref.head}}, which is not a named group of match.regexValue`);
        }
      } else if (ref.head !== output) {
        r.fail(
          field,
          `references \${${ref.head}.${ref.field}}, but the transform output is ${output ?? 'absent'}`,
        );
      }
    }
  }
}

function compileRule(raw: unknown, index: number, seen: Set<string>): CompiledRule {
  const id = isObject(raw) && typeof raw.id === 'string' && raw.id !== '' ? raw.id : undefined;
  const r: RuleReader = new RuleReader(id === undefined ? `rule #${index + 1}` : `rule "${id}"`, id);
  if (!isObject(raw)) r.fail('(rule)', 'must be an object');
  r.known(raw, '', ['id', 'match', 'transform', 'validate', 'action', 'classify', 'proxy']);
  if (id === undefined) r.fail('id', 'is required and must be a non-empty string');
  if (!RULE_ID.test(id)) r.fail('id', `must use letters, digits, "_", "-" or ".", got ${JSON.stringify(id)}`);
  if (seen.has(id)) r.fail('id', 'is used by an earlier rule');
  seen.add(id);

  const compiled: CompiledRule = { rule: raw as unknown as Rule, exist: [] };
  const match = compileMatch(r, raw);
  if (match) compiled.match = match;
  const transform = compileTransform(r, raw);
  if (transform) compiled.transform = transform;
  if (transform && !match) r.fail('transform', 'needs a match whose groups feed it');

  const validate = r.object(raw, 'validate', 'validate', false);
  if (validate) {
    r.known(validate, 'validate', ['exist']);
    compiled.exist = r
      .stringArray(validate, 'exist', 'validate.exist')
      .map((s, i) => r.template(s, `validate.exist[${i}]`));
  }

  const action = r.oneOf(raw, 'action', 'action', ACTIONS);
  const classify = r.object(raw, 'classify', 'classify', action === 'classify');
  const proxy = r.object(raw, 'proxy', 'proxy', false);
  if (action === 'classify') {
    if (proxy) r.fail('proxy', 'is only for action "proxy"');
    const c = classify as Json;
    r.known(c, 'classify', ['type', 'value']);
    const type = r.oneOf(c, 'type', 'classify.type', CLASSIFY_TYPES);
    const value = r.string(c, 'value', 'classify.value', type !== 'FIRST_CELL');
    compiled.classify = {
      type,
      ...(value === undefined ? {} : { value: r.template(value, 'classify.value') }),
    };
  } else {
    if (classify) r.fail('classify', 'is only for action "classify"');
    if (proxy) {
      r.known(proxy, 'proxy', ['address']);
      r.string(proxy, 'address', 'proxy.address');
    }
  }

  const templates: [string, Template][] = [
    ...(compiled.transform?.input.map((t, i): [string, Template] => [`transform.input[${i}]`, t]) ?? []),
    ...compiled.exist.map((t, i): [string, Template] => [`validate.exist[${i}]`, t]),
    ...(compiled.classify?.value ? [['classify.value', compiled.classify.value] as [string, Template]] : []),
  ];
  checkReferences(r, compiled, templates);
  return compiled;
}

/** Validates a parsed ruleset (a JSON array of rules) and compiles it. Throws RulesetError. */
export function loadRuleset(value: unknown): Ruleset {
  if (!Array.isArray(value)) throw new RulesetError('a ruleset must be a JSON array of rules');
  const seen = new Set<string>();
  return { rules: value.map((raw, i) => compileRule(raw, i, seen)) };
}

/** Reads, parses and validates a ruleset file. Throws RulesetError (a ConfigError). */
export function loadRulesetFile(path: string): Ruleset {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new RulesetError(`cannot read ruleset file ${path}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RulesetError(`ruleset file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  try {
    return loadRuleset(value);
  } catch (err) {
    if (err instanceof RulesetError) {
      throw new RulesetError(`ruleset file ${path}: ${err.message}`, err.ruleId, err.field);
    }
    throw err;
  }
}

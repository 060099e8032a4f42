// biome-ignore-all lint/suspicious/noTemplateCurlyInString: rules interpolate ${group} in plain strings by design
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config.js';
import { loadRuleset, loadRulesetFile, RulesetError } from './load.js';

/** The runner-token rule of seed 003, verbatim in shape. */
const RUNNER_RULE = {
  id: 'session_token_header_runner_token',
  match: {
    type: 'header',
    name: 'runner-token',
    regexValue: '^glrtr?-(?<payload>[0-9A-Za-z_-]{27,300})\\.01\\.(?<payload_length>[0-9a-z]{2})[0-9a-z]{7}$',
  },
  transform: {
    type: 'routable-token-payload',
    input: ['${payload}', '${payload_length}'],
    output: 'decoded',
  },
  action: 'classify',
  classify: { type: 'CELL_ID', value: '${decoded.c}' },
  validate: { exist: ['${decoded.c}'] },
};

function error(value: unknown): RulesetError {
  try {
    loadRuleset(value);
  } catch (err) {
    if (err instanceof RulesetError) return err;
    throw err;
  }
  throw new Error('expected a RulesetError');
}

/** RUNNER_RULE with one field replaced (dotted path; `undefined` deletes it). */
function withField(path: string, value: unknown): Record<string, unknown> {
  const rule = structuredClone(RUNNER_RULE) as Record<string, unknown>;
  const keys = path.split('.');
  let at = rule;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  const last = keys.at(-1) as string;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return rule;
}

describe('loadRuleset', () => {
  it('loads the seed 003 runner-token rule and compiles its regex', () => {
    const { rules } = loadRuleset([RUNNER_RULE, { id: 'catch_all', action: 'proxy' }]);
    expect(rules.map((r) => r.rule.id)).toEqual(['session_token_header_runner_token', 'catch_all']);
    expect(rules[0]?.match?.regex.test('glrt-AAAAAAAAAAAAAAAAAAAAAAAAAAA.01.0r1234567')).toBe(true);
    expect(rules[1]?.match).toBeUndefined();
  });

  it.each([
    [{}, 'a ruleset must be a JSON array of rules'],
    [[{ action: 'proxy' }], 'rule #1: id is required and must be a non-empty string'],
    [[RUNNER_RULE, RUNNER_RULE], 'rule "session_token_header_runner_token": id is used by an earlier rule'],
    [[withField('action', 'route')], 'action must be one of "classify", "proxy", got "route"'],
    [
      [withField('match.type', 'query')],
      'match.type must be one of "header", "cookie", "path", "authorization-basic", got "query"',
    ],
    [[withField('match.name', undefined)], 'match.name must be a non-empty string'],
    [
      [withField('match.regexValue', '^(?<payload>[a-z')],
      'match.regexValue is not a valid regular expression',
    ],
    [[withField('match.regex_value', 'x')], 'match.regex_value is not a known field'],
    [[withField('transform.type', 'base64-json')], 'transform.type must be one of "routable-token-payload"'],
    [
      [withField('transform.input', ['${payload}'])],
      'transform.input must be ["${payload}", "${payload_length}"]',
    ],
    [[withField('transform.output', 'a.b')], 'transform.output must be a plain name'],
    [
      [withField('transform.input', ['${token}', '${payload_length}'])],
      'transform.input[0] references ${token}, which is not a named group of match.regexValue',
    ],
    [
      [withField('classify.value', '${decode.c}')],
      'classify.value references ${decode.c}, but the transform output is decoded',
    ],
    [[withField('classify.value', '${decoded.c')], 'classify.value is not a valid interpolation: unclosed'],
    [[withField('classify.type', 'ROUTABLE_TOKEN')], 'classify.type must be one of "CELL_ID"'],
    [[withField('classify', undefined)], 'classify is required and must be an object'],
    [[withField('validate.exist', '${decoded.c}')], 'validate.exist must be an array of non-empty strings'],
    [
      [{ id: 'p', action: 'proxy', classify: { type: 'FIRST_CELL' } }],
      'classify is only for action "classify"',
    ],
    [[{ id: 'x', action: 'proxy', transform: RUNNER_RULE.transform }], 'transform needs a match'],
  ])('names the rule and field of each problem (%#)', (value, message) => {
    const err = error(value);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain(message);
  });

  it('carries the rule id and field on the error', () => {
    const err = error([withField('classify.type', 'X')]);
    expect(err.ruleId).toBe('session_token_header_runner_token');
    expect(err.field).toBe('classify.type');
    expect(err.message).toMatch(/^rule "session_token_header_runner_token": classify\.type/);
  });

  it('accepts FIRST_CELL without a value and path matches without a name', () => {
    const { rules } = loadRuleset([
      {
        id: 'org',
        match: { type: 'path', regexValue: '^/organizations/(?<org>[^/]+)' },
        action: 'classify',
        classify: { type: 'FIRST_CELL' },
      },
    ]);
    expect(rules[0]?.classify).toEqual({ type: 'FIRST_CELL' });
    expect(error([{ ...withField('match.type', 'path') }]).message).toContain(
      'match.name is not used by a path match',
    );
  });
});

describe('loadRulesetFile', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('reads a file and prefixes problems with its path', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'rules-test-'));
    dir = tmp;
    const good = join(tmp, 'good.json');
    writeFileSync(good, JSON.stringify([RUNNER_RULE]));
    expect(loadRulesetFile(good).rules).toHaveLength(1);
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify([withField('action', 'nope')]));
    expect(() => loadRulesetFile(bad)).toThrow(
      `ruleset file ${bad}: rule "session_token_header_runner_token": action`,
    );
    const notJson = join(tmp, 'broken.json');
    writeFileSync(notJson, '[{');
    expect(() => loadRulesetFile(notJson)).toThrow(/is not valid JSON/);
    expect(() => loadRulesetFile(join(tmp, 'missing.json'))).toThrow(/cannot read ruleset file/);
  });
});

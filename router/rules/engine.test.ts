// biome-ignore-all lint/suspicious/noTemplateCurlyInString: rules interpolate ${group} in plain strings by design
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodeRoutableToken } from '../../lib/routable-token.js';
import { evaluate } from './engine.js';
import { classifiedCellId, parseCookies, RULE_ACTION_HEADER, RULE_TYPE_HEADER, ruleHeaders } from './http.js';
import { loadRuleset, loadRulesetFile } from './load.js';
import type { RuleRequest } from './types.js';

const DEFAULT_RULES = fileURLToPath(new URL('./default-rules.json', import.meta.url));
const defaults = loadRulesetFile(DEFAULT_RULES);

function request(over: Partial<RuleRequest> = {}): RuleRequest {
  return { method: 'GET', path: '/api/v4/user', headers: {}, cookies: {}, ...over };
}

/** cells-routing.md §2.4: random 00..0f, c=2, o=1, u=1000. */
const PAT_C2 = 'glpat-AAECAwQFBgcICQoLDA0OD2M6MgpvOjEKdTpycww.01.131wrbkjv';
const runnerToken = (c: number) => encodeRoutableToken('glrt-', { c, o: 3, p: 5, u: 9, t: 3 });
const SESSION = `cell-3-${'ab'.repeat(16)}`;

describe('default ruleset', () => {
  it('routes a PAT in Private-Token or Authorization: Bearer by its cell id', () => {
    for (const headers of [{ 'private-token': PAT_C2 }, { Authorization: `Bearer ${PAT_C2}` }]) {
      expect(evaluate(defaults, request({ headers }))).toEqual({
        kind: 'classify',
        type: 'CELL_ID',
        value: '2',
        ruleId: headers['private-token']
          ? 'session_token_header_private_token'
          : 'session_token_header_authorization_bearer',
        action: 'classify',
      });
    }
  });

  it('routes runner tokens (glrt-, glrtr-) in runner-token, Private-Token, Job-Token and Bearer headers', () => {
    const token = runnerToken(4);
    const cases: [Record<string, string>, string][] = [
      [{ 'runner-token': token }, 'session_token_header_runner_token'],
      [{ 'Runner-Token': token.replace('glrt-', 'glrtr-') }, 'session_token_header_runner_token'],
      [{ 'PRIVATE-TOKEN': token }, 'session_token_header_private_token'],
      [{ 'job-token': token }, 'session_token_header_job_token_runner_token'],
      [{ authorization: `bearer ${token}` }, 'session_token_header_authorization_bearer'],
    ];
    for (const [headers, ruleId] of cases) {
      expect(evaluate(defaults, request({ headers })), JSON.stringify(headers)).toMatchObject({
        kind: 'classify',
        type: 'CELL_ID',
        value: '4',
        ruleId,
      });
    }
  });

  it('routes the session cookie by its cell prefix', () => {
    const result = evaluate(defaults, request({ cookies: { _gitlab_session: SESSION } }));
    expect(result).toEqual({
      kind: 'classify',
      type: 'SESSION_PREFIX',
      value: 'cell-3',
      ruleId: 'session_prefix_cookie_gitlab_session',
      action: 'classify',
    });
    expect(classifiedCellId(result)).toBe(3);
    // The delimiter keeps cell-1003 from reading as cell-1 (gitlab#494292).
    const long = evaluate(defaults, request({ cookies: { _gitlab_session: `cell-1003-${'0'.repeat(32)}` } }));
    expect(classifiedCellId(long)).toBe(1003);
  });

  it('lets a token win over the session cookie (rules are ordered)', () => {
    const result = evaluate(
      defaults,
      request({ headers: { 'private-token': PAT_C2 }, cookies: { _gitlab_session: SESSION } }),
    );
    expect(classifiedCellId(result)).toBe(2);
  });

  it('decides nothing for legacy tokens, unprefixed sessions and plain requests', () => {
    for (const over of [
      { headers: { 'private-token': 'glpat-abcdefghij0123456789' } },
      { headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { cookies: { _gitlab_session: '0123456789abcdef0123456789abcdef' } },
      {},
    ]) {
      expect(evaluate(defaults, request(over))).toEqual({ kind: 'none' });
    }
  });

  it('rejects a token that matches a rule but cannot be decoded with 400, naming the rule', () => {
    // Right shape for the regex, but the length byte claims 0x60 routing bytes of a 20-byte payload.
    const b64 = Buffer.concat([Buffer.alloc(16), Buffer.from('o:1'), Buffer.from([0x60])]).toString(
      'base64url',
    );
    const bad = `glpat-${b64}.01.0r0000000`;
    const result = evaluate(defaults, request({ headers: { 'private-token': bad } }));
    expect(result).toMatchObject({
      kind: 'reject',
      status: 400,
      ruleId: 'session_token_header_private_token',
    });
    expect(result.kind === 'reject' && result.message).toMatch(/^malformed routable token: /);
    expect(result.kind === 'reject' && result.message).not.toContain(bad);
  });

  it('skips a decodable token without a cell id (validate.exist) and falls through to later rules', () => {
    const orgOnly = encodeRoutableToken('glpat-', { o: 1, u: 2 });
    const result = evaluate(
      defaults,
      request({ headers: { 'private-token': orgOnly }, cookies: { _gitlab_session: SESSION } }),
    );
    expect(result).toMatchObject({ kind: 'classify', type: 'SESSION_PREFIX', value: 'cell-3' });
  });
});

describe('evaluate', () => {
  const ruleset = loadRuleset([
    {
      id: 'force_cell',
      match: { type: 'cookie', name: 'force-cell', regexValue: '^(?<cell_name>cell-\\d+)' },
      action: 'classify',
      classify: { type: 'SESSION_PREFIX', value: '${cell_name}' },
    },
    {
      id: 'org_path',
      match: { type: 'path', regexValue: '^/organizations/(?<org>[a-z-]+)(?:/|$)' },
      validate: { exist: ['${org}'] },
      action: 'proxy',
      proxy: { address: 'cell-9.example:443' },
    },
    {
      id: 'optional_group',
      match: { type: 'header', name: 'x-cell', regexValue: '^(?:id-(?<id>\\d+)|none)$' },
      action: 'classify',
      classify: { type: 'CELL_ID', value: '${id}' },
    },
    { id: 'catch_all', action: 'proxy' },
  ]);

  it('takes the first rule that applies, top to bottom', () => {
    expect(
      evaluate(ruleset, request({ cookies: { 'force-cell': 'cell-2' }, path: '/organizations/acme' })),
    ).toMatchObject({
      ruleId: 'force_cell',
      value: 'cell-2',
    });
    expect(evaluate(ruleset, request({ path: '/organizations/acme/-/dashboard?x=1' }))).toEqual({
      kind: 'proxy',
      ruleId: 'org_path',
      action: 'proxy',
      address: 'cell-9.example:443',
    });
    expect(evaluate(ruleset, request({ path: '/explore' }))).toEqual({
      kind: 'proxy',
      ruleId: 'catch_all',
      action: 'proxy',
    });
  });

  it('reads headers case-insensitively and tries each value of a repeated header', () => {
    expect(evaluate(ruleset, request({ headers: { 'X-Cell': ['junk', 'id-7'] } }))).toMatchObject({
      ruleId: 'optional_group',
      value: '7',
    });
  });

  it('does not apply a classify rule whose value renders empty', () => {
    expect(evaluate(ruleset, request({ headers: { 'x-cell': 'none' } }))).toMatchObject({
      ruleId: 'catch_all',
    });
  });

  it('answers none when no rule applies', () => {
    expect(evaluate(loadRuleset([]), request())).toEqual({ kind: 'none' });
  });
});

describe('HTTP helpers', () => {
  it('names the headers the front adds for each decision', () => {
    expect(
      ruleHeaders({ kind: 'classify', type: 'CELL_ID', value: '2', ruleId: 'r', action: 'classify' }),
    ).toEqual({
      [RULE_ACTION_HEADER]: 'classify',
      [RULE_TYPE_HEADER]: 'CellId',
    });
    expect(
      ruleHeaders({
        kind: 'classify',
        type: 'SESSION_PREFIX',
        value: 'cell-2',
        ruleId: 'r',
        action: 'classify',
      }),
    ).toEqual({
      'X-GitLab-HTTP-Router-Rule-Action': 'classify',
      'X-GitLab-HTTP-Router-Rule-Type': 'SessionPrefix',
    });
    expect(ruleHeaders({ kind: 'proxy', ruleId: 'r', action: 'proxy' })).toEqual({
      [RULE_ACTION_HEADER]: 'proxy',
    });
    expect(ruleHeaders({ kind: 'none' })).toEqual({});
  });

  it('maps classifications to cell ids', () => {
    const classify = (type: 'CELL_ID' | 'SESSION_PREFIX' | 'FIRST_CELL', value: string) =>
      classifiedCellId({ kind: 'classify', type, value, ruleId: 'r', action: 'classify' });
    expect(classify('CELL_ID', '12')).toBe(12);
    expect(classify('SESSION_PREFIX', 'cell-12')).toBe(12);
    expect(classify('SESSION_PREFIX', '12')).toBeUndefined();
    expect(classify('CELL_ID', 'cell-12')).toBeUndefined();
    expect(classify('FIRST_CELL', '')).toBeUndefined();
    expect(classifiedCellId({ kind: 'none' })).toBeUndefined();
  });

  it('parses Cookie headers (first occurrence wins, quotes removed)', () => {
    expect(parseCookies(`a=1; _gitlab_session=${SESSION}; a=2; b="x y"; junk; =v`)).toEqual({
      a: '1',
      _gitlab_session: SESSION,
      b: 'x y',
    });
    expect(parseCookies(['a=1', 'c=3'])).toEqual({ a: '1', c: '3' });
    expect(parseCookies(undefined)).toEqual({});
  });
});

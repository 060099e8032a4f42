import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config.js';
import { CellDirectory } from '../cells/directory.js';
import { DEFAULT_RULESET_NAME } from '../rules/default-ruleset.js';
import { loadRouterRuleset } from './ruleset.js';

const dir = mkdtempSync(join(tmpdir(), 'router-ruleset-'));
const cells = new CellDirectory(
  [
    { id: 1, name: 'cell_us0', legacy: true, region: 'us', url: 'http://127.0.0.1:4001' },
    { id: 3, name: 'cell_eu0', legacy: false, region: 'eu', url: 'https://eu0.example.com/prefix' },
  ],
  'us',
);

afterAll(async () => {
  await cells.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, rules: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(rules));
  return path;
}

describe('loadRouterRuleset', () => {
  it('uses the bundled default ruleset without rulesFile', () => {
    const { ruleset, source } = loadRouterRuleset(undefined, cells);
    expect(source).toBe(DEFAULT_RULESET_NAME);
    expect(ruleset.rules.map((r) => r.rule.id)).toEqual([
      'session_token_header_runner_token',
      'session_token_header_private_token',
      'session_token_header_job_token_runner_token',
      'session_token_header_authorization_bearer',
      'session_token_header_authorization_basic_routable_token',
      'session_prefix_cookie_gitlab_session',
    ]);
  });

  it('accepts proxy rules whose address is a configured cell, default ports included', () => {
    const path = file('ok.json', [
      { id: 'a', action: 'proxy', proxy: { address: 'eu0.example.com:443' } },
      { id: 'b', action: 'proxy', proxy: { address: '127.0.0.1:4001' } },
    ]);
    expect(loadRouterRuleset(path, cells).ruleset.rules).toHaveLength(2);
  });

  it('refuses a proxy address that is no configured cell, naming the rule and the cells', () => {
    const path = file('bad.json', [
      { id: 'elsewhere', action: 'proxy', proxy: { address: 'evil.example:443' } },
    ]);
    expect(() => loadRouterRuleset(path, cells)).toThrow(ConfigError);
    expect(() => loadRouterRuleset(path, cells)).toThrow(
      `ruleset ${path}: rule "elsewhere": proxy.address "evil.example:443" is not the host:port of a configured cell (cell_us0 127.0.0.1:4001, cell_eu0 eu0.example.com:443)`,
    );
  });

  it('reports unreadable and invalid files as configuration errors', () => {
    expect(() => loadRouterRuleset(join(dir, 'missing.json'), cells)).toThrow(/cannot read ruleset file/);
    const invalid = file('invalid.json', [{ id: 'x', action: 'route' }]);
    expect(() => loadRouterRuleset(invalid, cells)).toThrow(ConfigError);
  });
});

import { type CellDirectory, cellAuthority } from '../cells/directory.js';
import { loadConfiguredRuleset } from '../rules/default-ruleset.js';
import { type Ruleset, RulesetError } from '../rules/load.js';

/**
 * The HTTP front's ruleset (`rulesFile`, else the bundled default), checked against the configured
 * cells: a `proxy` rule's `address` must be the `host:port` of one of them, since the router only
 * talks to its cells. Throws RulesetError (a ConfigError: exit 78 at start).
 */
export function loadRouterRuleset(
  rulesFile: string | undefined,
  cells: CellDirectory,
): { ruleset: Ruleset; source: string } {
  const loaded = loadConfiguredRuleset(rulesFile);
  for (const { rule } of loaded.ruleset.rules) {
    const address = rule.proxy?.address;
    if (address === undefined || cells.byAddress(address)) continue;
    const known = cells.cells.map((c) => `${c.name} ${cellAuthority(c.url)}`).join(', ');
    throw new RulesetError(
      `ruleset ${loaded.source}: rule "${rule.id}": proxy.address "${address}" is not the host:port of a configured cell (${known})`,
      rule.id,
      'proxy.address',
    );
  }
  return loaded;
}

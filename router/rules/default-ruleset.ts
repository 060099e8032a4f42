import defaultRules from './default-rules.json' with { type: 'json' };
import { loadRuleset, loadRulesetFile, type Ruleset, RulesetError } from './load.js';

/**
 * The ruleset the router uses without `rulesFile`: `default-rules.json` beside this module (imported,
 * so the build copies it into `dist/` with the code). Routable tokens in `runner-token`,
 * `Private-Token`, `Job-Token` and `Authorization: Bearer`, then the `_gitlab_session` cell prefix.
 */
export const DEFAULT_RULESET_NAME = 'router/rules/default-rules.json';

export function loadDefaultRuleset(): Ruleset {
  try {
    return loadRuleset(defaultRules);
  } catch (err) {
    if (err instanceof RulesetError) {
      throw new RulesetError(`${DEFAULT_RULESET_NAME}: ${err.message}`, err.ruleId, err.field);
    }
    throw err;
  }
}

/** The configured ruleset file, or the default one; throws RulesetError (a ConfigError). */
export function loadConfiguredRuleset(rulesFile: string | undefined): { ruleset: Ruleset; source: string } {
  return rulesFile === undefined
    ? { ruleset: loadDefaultRuleset(), source: DEFAULT_RULESET_NAME }
    : { ruleset: loadRulesetFile(rulesFile), source: rulesFile };
}

import { ConfigError } from '../../lib/config.js';
import type { CallContext, LearnAnswer } from '../cells/internal-api.js';
import type { CellConfig, RouterConfig } from '../config.js';
import type { Learner } from '../routing/classifier.js';

/**
 * The `site` routing mode's `Learner`: the router is the SSH entry of one GitLab site (e.g. a Geo
 * secondary, as that site's own gitlab-shell), so every path belongs to its one configured cell, the
 * site itself. Nothing is asked and nothing is cached.
 */
export class SiteLearner implements Learner {
  constructor(private readonly site: CellConfig) {}

  async learn(
    _asked: CellConfig,
    _method: string,
    pathInfo: string,
    _ctx: CallContext,
  ): Promise<LearnAnswer> {
    return { path: pathInfo, cell: this.site.name, source: 'fixed', exact: true, cacheTtl: 0 };
  }
}

/** `routing: "site"` serves one site: exactly one `cells` entry. */
export function checkSite(config: Pick<RouterConfig, 'routing' | 'cells'>): void {
  if (config.routing === 'site' && config.cells.length !== 1)
    throw new ConfigError(
      `routing "site" serves one site: cells must have one entry, got ${config.cells.length}`,
    );
}

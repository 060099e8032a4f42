import { createHash } from 'node:crypto';
import type { CallContext, KeyCellResolver, LearnAnswer } from '../cells/internal-api.js';
import type { CellConfig } from '../config.js';
import type { Learner } from '../routing/classifier.js';
import type { TopologyResolver } from './resolver.js';

/**
 * The `topology` routing mode's `Learner`: instead of asking a cell's learn endpoint, classify the
 * path's top-level namespace as a `route` claim, as gitlab-shell does before `/allowed` (first path
 * segment, leading `/` and trailing `.git` removed). Nothing is cached (`cacheTtl` 0: gitlab-shell
 * classifies every command). A failed classify throws, so the classifier counts the fallback and
 * uses the legacy cell; NOT_FOUND is the legacy cell with `source: "fallback"`.
 */
export class TopologyLearner implements Learner {
  constructor(private readonly resolver: TopologyResolver) {}

  async learn(_asked: CellConfig, _method: string, pathInfo: string, ctx: CallContext): Promise<LearnAnswer> {
    const route = topLevelRoute(pathInfo);
    const legacy = (cell: CellConfig): LearnAnswer => ({
      path: pathInfo,
      cell: cell.name,
      source: 'fallback',
      exact: true,
      cacheTtl: 0,
    });
    if (route === '') return legacy(this.resolver.legacy);
    const r = await this.resolver.resolve({ route }, ctx);
    if (r.outcome === 'failed') throw new Error('topology classify failed');
    if (r.outcome !== 'proxy') return legacy(r.cell);
    return { path: `/${route}`, cell: r.cell.name, source: 'routable', exact: false, cacheTtl: 0 };
  }
}

/** gitlab-shell's route claim: the first segment of the repository path, without `/` and `.git`. */
export function topLevelRoute(path: string): string {
  const first = path.replace(/^\/+/, '').split('/')[0] ?? '';
  return first.replace(/\.git$/, '');
}

/** OpenSSH's `SHA256:` fingerprint of a key blob without the prefix (43 characters). */
export function keyFingerprint(blobBase64: string): string {
  return createHash('sha256').update(Buffer.from(blobBase64, 'base64')).digest('base64').replace(/=+$/, '');
}

/** The `keyCell` resolver of `InternalApi` in `topology` mode: classify by `ssh_key_fingerprint`. */
export function keyCellResolver(resolver: TopologyResolver): KeyCellResolver {
  return async (blob, ctx) =>
    (await resolver.resolve({ ssh_key_fingerprint: keyFingerprint(blob) }, ctx)).cell;
}

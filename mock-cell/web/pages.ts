import { GLOBAL_PAGES } from './global-pages.js';
import { NAMESPACE_PAGES } from './namespace-pages.js';
import { ORGANIZATION_PAGES } from './organization-pages.js';
import type { PageHandler } from './page-handler.js';

/**
 * The HTML pages of seed 000's request flows, by route name. Pages authenticate by session only (as
 * GitLab's web UI); a cell serves the pages of what it owns and answers the "not mine" signal (421)
 * for pages of another cell's namespace or organization (`page-scope.ts`).
 */

export const PAGE_HANDLERS = {
  ...GLOBAL_PAGES,
  ...ORGANIZATION_PAGES,
  ...NAMESPACE_PAGES,
} satisfies Record<string, PageHandler>;

/**
 * @file What a path of the HTTP front is classified by in `topology` mode, as the HTTP Router's path
 * router does: GitLab's reserved top-level routes (`/api/…`, `/admin/…`, `/-/…`, `/users/…`, …) are
 * never a namespace, so they are not classified at all (the rules decide, else the legacy cell); a
 * format suffix (`.json`, `.atom`, …) of the last segment is stripped once, at its last dot, so
 * `/john.doe.json` is the namespace `john.doe`; the second step of GitLab's two-step sign-in,
 * `/users/sign_in?login=<username>`, is classified by the user's namespace `/<username>`, which
 * lives on the user's cell (reference-cell.md §5.2 H5, H7, H9; gitlab!219667).
 */

/** Top-level words GitLab reserves (a subset of `Gitlab::PathRegex::TOP_LEVEL_ROUTES`). */
const RESERVED = new Set([
  '-',
  'admin',
  'api',
  'assets',
  'dashboard',
  'explore',
  'help',
  'oauth',
  'profile',
  'search',
  'uploads',
  'users',
]);

/** Formats Rails answers that a path may end in. */
const FORMATS = /\.(json|atom|xml|html|rss|txt|csv|patch|diff)$/i;

/** The path to classify (`target` with its query), or undefined when its first segment is a reserved word. */
export function claimPath(target: string): string | undefined {
  const [path = '/', query = ''] = target.split('?', 2);
  const login = new URLSearchParams(query).get('login');
  if (/^\/users\/sign_in\/?$/.test(path) && login && /^[\w.-]+$/.test(login)) return `/${login}`;
  const first = path.replace(/^\/+/, '').split('/')[0] ?? '';
  if (RESERVED.has(first.toLowerCase())) return undefined;
  return path.replace(FORMATS, '');
}

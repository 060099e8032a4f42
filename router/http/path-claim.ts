/**
 * @file What a path of the HTTP front is classified by in `topology` mode, as the HTTP Router's path
 * router does: GitLab's reserved top-level routes (`/api/…`, `/admin/…`, `/-/…`, `/users/…`, …) are
 * never a namespace, so they are not classified at all (the rules decide, else the legacy cell); a
 * format suffix (`.json`, `.atom`, …) of the last segment is stripped once, at its last dot, so
 * `/john.doe.json` is the namespace `john.doe`; the second step of GitLab's two-step sign-in,
 * `/users/sign_in?login=<username>`, is classified by the user's namespace `/<username>`, which
 * lives on the user's cell (reference-cell.md §5.2 H5, H7, H9; gitlab!219667).
 */

/**
 * Top-level words GitLab reserves (`Gitlab::PathRegex::TOP_LEVEL_ROUTES`, lib/gitlab/path_regex.rb):
 * no group can take these names, so a path led by one is never a namespace.
 */
const RESERVED = new Set([
  '-',
  '.well-known',
  '404.html',
  '422.html',
  '500.html',
  '502.html',
  '503.html',
  'abuse_reports',
  'admin',
  'api',
  'apple-touch-icon-precomposed.png',
  'apple-touch-icon.png',
  'assets',
  'autocomplete',
  'ci',
  'dashboard',
  'deploy.html',
  'explore',
  'favicon.ico',
  'files',
  'groups',
  'header_logo_dark.png',
  'header_logo_light.png',
  'health_check',
  'help',
  'import',
  'invites',
  'jwt',
  'koding',
  'notification_settings',
  'oauth',
  'profile',
  'projects',
  'public',
  'robots.txt',
  's',
  'search',
  'sent_notifications',
  'slash-command-logo.png',
  'snippets',
  'u',
  'unsubscribes',
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
  // A reserved word keeps reserved with a format suffix (`/help.json`); `robots.txt` is one whole.
  const stripped = path.replace(FORMATS, '');
  const first = (word: string) => word.replace(/^\/+/, '').split('/')[0]?.toLowerCase() ?? '';
  if (RESERVED.has(first(path)) || RESERVED.has(first(stripped))) return undefined;
  return stripped;
}

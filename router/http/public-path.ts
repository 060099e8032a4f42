/**
 * What the public HTTP front refuses before routing: the internal API (`/api/v4/internal/…`, meant
 * for GitLab Shell and the router, reached through the cells' bridges) and paths that cannot be
 * decoded. The check runs on the path as a Rails or Fastify router would see it: percent-decoded
 * (an encoded `/` counts as one), `;` parameters dropped, empty and `.` segments removed, `..`
 * resolved, compared case-insensitively, so `//api/v4/./internal`, `/api/v4/%69nternal` or
 * `/API/v4/internal/allowed.json` are refused like the plain spelling.
 */
export type PublicPathVerdict = 'public' | 'internal' | 'malformed';

const INTERNAL = ['api', 'v4', 'internal'] as const;

function segmentsOf(path: string): string[] | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const out: string[] = [];
  for (const raw of decoded.split('/')) {
    const segment = (raw.split(';')[0] as string).toLowerCase();
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out;
}

/** `path` is the request target without its query string. */
export function checkPublicPath(path: string): PublicPathVerdict {
  const segments = segmentsOf(path);
  if (!segments) return 'malformed';
  const isInternal = INTERNAL.every((word, i) => {
    const segment = segments[i];
    // `internal.json`: a format suffix does not make it another route.
    return segment === word || (i === INTERNAL.length - 1 && segment?.startsWith(`${word}.`) === true);
  });
  return isInternal ? 'internal' : 'public';
}

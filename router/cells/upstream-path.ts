/** A request path under a cell URL's own path prefix (`http://cell/prefix` + `/a` → `/prefix/a`). */
export function joinPath(prefix: string, path: string): string {
  return `${prefix.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
}

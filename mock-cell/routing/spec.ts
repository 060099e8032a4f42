/**
 * Rails path specs (`/*namespace_id/:project_id(.:format)`): parsing, matching and the concrete
 * examples of the route snapshot (cells-routing.md §5).
 *
 * Matching follows Rails with GitLab's path constraints: parameter values may contain dots
 * (`john.doe`), so a format is split off only where the route accepts one, only when the text after
 * the last dot is a known format, and only once (`/john.doe.json` → `john.doe` + `json`;
 * `/john.doe` → `john.doe`; `/a.json.json` → `a.json` + `json`).
 */

/** Formats Rails knows (Mime types) plus GitLab's `diff`/`patch`. No format contains a dot. */
export const KNOWN_FORMATS = [
  'atom',
  'css',
  'csv',
  'diff',
  'gif',
  'html',
  'ics',
  'jpeg',
  'jpg',
  'js',
  'json',
  'patch',
  'pdf',
  'png',
  'rss',
  'svg',
  'text',
  'txt',
  'xml',
  'yaml',
  'zip',
] as const;

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'param'; name: string }
  | { kind: 'glob'; name: string }
  | { kind: 'format' }
  | { kind: 'group'; nodes: Node[] };

const NAME = /^[a-z_]+/;

/** Parses a spec into nodes; `\(` and `\)` are literal parentheses. Throws on unbalanced groups. */
export function parseSpec(spec: string): Node[] {
  const stack: Node[][] = [[]];
  const top = () => stack[stack.length - 1] as Node[];
  const text = (t: string) => {
    const nodes = top();
    const last = nodes[nodes.length - 1];
    if (last?.kind === 'text') last.text += t;
    else nodes.push({ kind: 'text', text: t });
  };
  for (let i = 0; i < spec.length; i++) {
    const ch = spec[i] as string;
    if (ch === '\\' && i + 1 < spec.length) {
      text(spec[++i] as string);
    } else if (ch === '(') {
      const group: Node = { kind: 'group', nodes: [] };
      top().push(group);
      stack.push(group.nodes);
    } else if (ch === ')') {
      if (stack.length === 1) throw new Error(`unbalanced ")" in route spec ${spec}`);
      stack.pop();
    } else if (ch === ':' || ch === '*') {
      const name = NAME.exec(spec.slice(i + 1))?.[0];
      if (!name) throw new Error(`"${ch}" without a name in route spec ${spec}`);
      i += name.length;
      const nodes = top();
      const last = nodes[nodes.length - 1];
      if (ch === ':' && name === 'format' && last?.kind === 'text' && last.text.endsWith('.')) {
        last.text = last.text.slice(0, -1);
        if (last.text === '') nodes.pop();
        nodes.push({ kind: 'format' });
      } else {
        nodes.push({ kind: ch === ':' ? 'param' : 'glob', name });
      }
    } else {
      text(ch);
    }
  }
  if (stack.length !== 1) throw new Error(`unbalanced "(" in route spec ${spec}`);
  return stack[0] as Node[];
}

function hasFormat(nodes: readonly Node[]): boolean {
  return nodes.some((n) => n.kind === 'format' || (n.kind === 'group' && hasFormat(n.nodes)));
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A compiled spec: its regex (named groups per parameter, `format` for the format). */
export interface CompiledSpec {
  spec: string;
  regex: RegExp;
  acceptsFormat: boolean;
}

/** Regex sources for parameters, by name; unlisted params match one segment, globs one or more. */
export type Constraints = Readonly<Record<string, string>>;

const DEFAULT_PARAM = '[^/]+?';
const DEFAULT_GLOB = '.+?';

function emitNode(n: Node, constraints: Constraints): string {
  switch (n.kind) {
    case 'text':
      return escapeRegex(n.text);
    case 'param':
      return `(?<${n.name}>${constraints[n.name] ?? DEFAULT_PARAM})`;
    case 'glob':
      return `(?<${n.name}>${constraints[n.name] ?? DEFAULT_GLOB})`;
    case 'format':
      return `\\.(?<format>${KNOWN_FORMATS.join('|')})`;
    case 'group':
      return `(?:${emit(n.nodes, constraints)})?`;
  }
}

function emit(nodes: readonly Node[], constraints: Constraints): string {
  return nodes.map((n) => emitNode(n, constraints)).join('');
}

export function compileSpec(spec: string, constraints: Constraints = {}): CompiledSpec {
  const nodes = parseSpec(spec);
  // `d`: match indices, so callers can cut the path right after a parameter.
  return { spec, regex: new RegExp(`^${emit(nodes, constraints)}$`, 'd'), acceptsFormat: hasFormat(nodes) };
}

export interface SpecMatch {
  /** Parameter values as in the URL (still percent-encoded). */
  raw: Record<string, string>;
  /** Parameter values percent-decoded, as Rails hands them to controllers. */
  params: Record<string, string>;
  /** Where each parameter's raw value starts and ends in the matched path. */
  offsets: Record<string, readonly [number, number]>;
  format?: string;
}

/** Matches a normalized path (see `normalizePath`); undefined when it does not match. */
export function matchSpec(compiled: CompiledSpec, path: string): SpecMatch | undefined {
  const m = compiled.regex.exec(path);
  if (!m) return undefined;
  const raw: Record<string, string> = {};
  const params: Record<string, string> = {};
  const offsets: Record<string, readonly [number, number]> = {};
  let format: string | undefined;
  for (const [name, value] of Object.entries(m.groups ?? {})) {
    if (value === undefined) continue;
    if (name === 'format') {
      format = value;
      continue;
    }
    raw[name] = value;
    offsets[name] = m.indices?.groups?.[name] ?? [0, 0];
    try {
      params[name] = decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return { raw, params, offsets, ...(format === undefined ? {} : { format }) };
}

const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * Rails' path normalization before matching: query and fragment dropped, `//` collapsed, trailing
 * `/` stripped, percent-escapes of unreserved characters decoded (others, like `%2F`, kept).
 */
export function normalizePath(pathInfo: string): string {
  const path = (pathInfo.split(/[?#]/)[0] ?? '')
    .replace(/%([0-9A-Fa-f]{2})/g, (percentEscape, hex: string) => {
      const ch = String.fromCharCode(Number.parseInt(hex, 16));
      return UNRESERVED.test(ch) ? ch : percentEscape.toUpperCase();
    })
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '');
  return path.startsWith('/') ? path : `/${path}`;
}

/** One entry of `gitlab_routes.json` (cells-routing.md §5). */
export interface SnapshotEntry {
  template: string;
  example: string;
  acceptsFormat?: true;
  dottedExample?: string;
}

const TRAILING_FORMAT = '(.:format)';

/** The template of a spec: a trailing `(.:format)` removed, everything else verbatim. */
export function templateOf(spec: string): string {
  return spec.endsWith(TRAILING_FORMAT) ? spec.slice(0, -TRAILING_FORMAT.length) : spec;
}

/** A concrete URL for a template, with `param` for `:name` and `glob` for `*name`. */
export function exampleOf(template: string, param: string, glob: string): string {
  const OPEN = '\u0000';
  const CLOSE = '\u0001';
  let s = template.replaceAll('\\(', OPEN).replaceAll('\\)', CLOSE);
  for (let prev = ''; prev !== s; ) {
    prev = s;
    s = s.replace(/\(([^()]*)\)/g, '$1');
  }
  s = s
    .replaceAll('.:format', '')
    .replace(/^\/api\/:version(?=\/|$)/, '/api/v4')
    .replace(/\*[a-z_]+/g, glob)
    .replace(/:[a-z_]+/g, param)
    .replaceAll(OPEN, '(')
    .replaceAll(CLOSE, ')')
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '');
  return s === '' ? '/' : s;
}

/** The snapshot entry of one raw spec (before deduplication). */
export function snapshotEntry(spec: string): SnapshotEntry {
  const template = templateOf(spec);
  const example = exampleOf(template, 'foo', 'foo/bar');
  const dotted = exampleOf(template, 'john.doe', 'john.doe/bar');
  return {
    template,
    example,
    ...(spec.includes('.:format') ? { acceptsFormat: true as const } : {}),
    ...(dotted === example ? {} : { dottedExample: dotted }),
  };
}

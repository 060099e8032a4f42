/**
 * `${name}` / `${output.key}` interpolation of rule strings. A template is parsed once at load
 * time; evaluating it against a scope of named groups and transform outputs gives a string, with
 * missing values rendered empty (so `validate.exist` can test them).
 */

export interface Reference {
  /** Named group, or the transform output's name. */
  head: string;
  /** Field of the transform output (`c` in `${decoded.c}`). */
  field?: string;
}

export type TemplatePart = { text: string } | { ref: Reference };

export interface Template {
  source: string;
  parts: TemplatePart[];
}

export interface Scope {
  groups: Readonly<Record<string, string | undefined>>;
  outputs: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

const IDENT = '[A-Za-z_][A-Za-z0-9_]*';
const REFERENCE = new RegExp(`^(${IDENT})(?:\\.(${IDENT}))?$`);

/** Parses a template; throws an Error naming the bad reference. */
export function parseTemplate(source: string): Template {
  const parts: TemplatePart[] = [];
  let rest = source;
  while (rest !== '') {
    const start = rest.indexOf('${');
    if (start === -1) {
      parts.push({ text: rest });
      break;
    }
    if (start > 0) parts.push({ text: rest.slice(0, start) });
    const end = rest.indexOf('}', start);
    if (end === -1) throw new Error(`unclosed "\${" in ${JSON.stringify(source)}`);
    const inner = rest.slice(start + 2, end);
    const m = REFERENCE.exec(inner);
    if (!m) throw new Error(`"\${${inner}}" is not a reference like \${name} or \${output.field}`);
    parts.push({
      ref: m[2] === undefined ? { head: m[1] as string } : { head: m[1] as string, field: m[2] },
    });
    rest = rest.slice(end + 1);
  }
  return { source, parts };
}

export function references(template: Template): Reference[] {
  return template.parts.flatMap((p) => ('ref' in p ? [p.ref] : []));
}

function lookup(ref: Reference, scope: Scope): string {
  if (ref.field === undefined) return scope.groups[ref.head] ?? '';
  const output = scope.outputs[ref.head];
  return (output && Object.hasOwn(output, ref.field) ? output[ref.field] : undefined) ?? '';
}

export function render(template: Template, scope: Scope): string {
  return template.parts.map((p) => ('ref' in p ? lookup(p.ref, scope) : p.text)).join('');
}

import { TopologyInvalid } from './errors.js';

/**
 * The vocabulary of topology validation: field kinds and their checks, how an entry is named in a
 * message, and the list of problems that is thrown as one CELL_TOPOLOGY_INVALID error.
 */

export type Kind = 'string' | 'int' | 'bool' | 'object' | 'array';
export type FieldSpec = Record<string, Kind | `${Kind}?`>;
export type Entry = Record<string, unknown>;

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && Number.isInteger(v)) return 'integer';
  return typeof v;
}

export function hasKind(v: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof v === 'string' && v !== '';
    case 'int':
      return typeof v === 'number' && Number.isInteger(v);
    case 'bool':
      return typeof v === 'boolean';
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
  }
}

const KIND_TEXT: Record<Kind, string> = {
  string: 'a non-empty string',
  int: 'an integer',
  bool: 'true or false',
  object: 'an object',
  array: 'an array',
};

/** `section[index]`, followed by the entry's username, full path, path, name or user when it has one. */
export function label(section: string, index: number, entry: object): string {
  const e = entry as Entry;
  const fullPath =
    typeof e.namespace === 'string' && typeof e.path === 'string' ? `${e.namespace}/${e.path}` : undefined;
  const ident = e.username ?? fullPath ?? e.path ?? e.name ?? e.user;
  return typeof ident === 'string' ? `${section}[${index}] "${ident}"` : `${section}[${index}]`;
}

export class Problems {
  readonly list: string[] = [];

  add(where: string, message: string): void {
    this.list.push(`${where}: ${message}`);
  }

  /** Checks the fields of one object against a spec; returns true when all are well typed. */
  fields(where: string, entry: Entry, spec: FieldSpec): boolean {
    let ok = true;
    for (const [key, raw] of Object.entries(spec)) {
      const optional = raw.endsWith('?');
      const kind = raw.replace('?', '') as Kind;
      const value = entry[key];
      if (value === undefined && optional) continue;
      if (!hasKind(value, kind)) {
        this.add(where, `field "${key}" must be ${KIND_TEXT[kind]}, got ${kindOf(value)}`);
        ok = false;
      }
    }
    return ok;
  }

  throwIfAny(): void {
    if (this.list.length > 0) {
      throw TopologyInvalid(
        `invalid topology (${this.list.length} problem${this.list.length === 1 ? '' : 's'}):\n  - ${this.list.join('\n  - ')}`,
      );
    }
  }
}

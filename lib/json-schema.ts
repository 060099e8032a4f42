import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { projectRoot } from './proto.js';

/**
 * The published JSON Schemas of `schemas/` (generated from their TypeScript types by
 * `npm run generate:schemas`) as validators that list every problem as `<path>: <what is wrong>`,
 * the path written as in the file (`projects[2].path`).
 */

export type SchemaName = 'topology' | 'stack' | 'edge';

/** `/projects/2/path` → `projects[2].path`; the root is named `root`. */
export function jsonPath(pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const part of parts) out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  return out === '' ? 'root' : out;
}

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${jsonPath(e.instancePath, String(params.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${jsonPath(e.instancePath, String(params.additionalProperty))}: is not a known field`;
    case 'const':
      return `${jsonPath(e.instancePath)}: must be ${JSON.stringify(params.allowedValue)}`;
    case 'enum':
      return `${jsonPath(e.instancePath)}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${jsonPath(e.instancePath)}: ${e.message ?? 'is invalid'}`;
  }
}

/**
 * Of the errors of a union (`anyOf`), keeps those of the branch that got furthest (the fewest
 * errors below the union), so a bad `repository` says what is wrong with it, not with every branch.
 */
function simplify(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  let out = errors.filter((e) => !unions.includes(e));
  for (const union of unions) {
    const below = out.filter((e) =>
      e.schemaPath.startsWith(union.schemaPath.replace(/\/(anyOf|oneOf)$/, '')),
    );
    const branches = new Map<string, ErrorObject[]>();
    for (const e of below) {
      const branch = e.schemaPath.slice(0, e.schemaPath.indexOf('/', union.schemaPath.length + 1));
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const best = [...branches.values()].sort((a, b) => a.length - b.length)[0] ?? [union];
    out = [...out.filter((e) => !below.includes(e)), ...best];
  }
  return out;
}

const validators = new Map<SchemaName, (value: unknown) => string[]>();

/** A validator of `schemas/<name>.schema.json`: the problems of a value, none when it conforms. */
export function schemaValidator(name: SchemaName): (value: unknown) => string[] {
  const cached = validators.get(name);
  if (cached) return cached;
  const schema = JSON.parse(readFileSync(join(projectRoot(), 'schemas', `${name}.schema.json`), 'utf8'));
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const check = (value: unknown) =>
    validate(value) ? [] : [...new Set(simplify(validate.errors ?? []).map(describe))];
  validators.set(name, check);
  return check;
}

import { describe, expect, it } from 'vitest';
import {
  CLAIM,
  CLASSIFY_REQUEST,
  CLASSIFY_RESPONSE,
  jsonName,
  type MessageSpec,
  PROXY_INFO,
  readJson,
  writeJson,
} from './proto-json.js';
import { topologyDefinition } from './protos.js';

interface LoadedField {
  name: string;
  number: number;
  label: string;
  type: string;
}

function loadedFields(spec: MessageSpec): LoadedField[] {
  const def = topologyDefinition()[spec.name] as unknown as { type: { field: LoadedField[] } };
  return def.type.field;
}

const KIND_OF: Record<string, string> = {
  TYPE_STRING: 'string',
  TYPE_INT64: 'int64',
  TYPE_ENUM: 'enum',
  TYPE_MESSAGE: 'message',
};

describe('the JSON field tables', () => {
  it.each([CLAIM, CLASSIFY_REQUEST, PROXY_INFO, CLASSIFY_RESPONSE])(
    'match the loaded proto: $name',
    (spec) => {
      const loaded = loadedFields(spec).map((f) => ({
        name: f.name,
        number: f.number,
        kind: KIND_OF[f.type],
        repeated: f.label === 'LABEL_REPEATED',
      }));
      const ours = spec.fields.map((f) => ({
        name: f.name,
        number: f.number,
        kind: f.kind,
        repeated: f.repeated === true,
      }));
      expect(ours).toEqual(loaded);
    },
  );

  it('enum values match the loaded enums', () => {
    const values = (name: string) =>
      (topologyDefinition()[name] as unknown as { type: { value: { name: string; number: number }[] } }).type
        .value;
    const type = CLASSIFY_REQUEST.fields.find((f) => f.name === 'type');
    expect(values('gitlab.cells.topology_service.ClassifyType').map((v) => type?.values?.[v.number])).toEqual(
      values('gitlab.cells.topology_service.ClassifyType').map((v) => v.name),
    );
    const action = CLASSIFY_RESPONSE.fields.find((f) => f.name === 'action');
    expect(action?.values).toEqual(values('gitlab.cells.topology_service.ClassifyAction').map((v) => v.name));
  });

  it('json names are protoc’s lowerCamelCase', () => {
    expect(jsonName('ssh_key_fingerprint')).toBe('sshKeyFingerprint');
    expect(jsonName('service_desk_custom_email')).toBe('serviceDeskCustomEmail');
    expect(jsonName('route')).toBe('route');
  });
});

describe('readJson / writeJson', () => {
  it('reads both name styles into proto names, with the oneof marker proto-loader sets', () => {
    expect(readJson(CLASSIFY_REQUEST, { claims: [{ userId: 5 }, { organization_path: 'acme' }] })).toEqual({
      claims: [
        { user_id: '5', claim: 'user_id' },
        { organization_path: 'acme', claim: 'organization_path' },
      ],
    });
    expect(readJson(CLASSIFY_REQUEST, { claim: null, type: 'CELL_ID', value: '2' })).toEqual({
      type: 'CELL_ID',
      value: '2',
    });
  });

  it('writes unset scalars as defaults and unset messages as null, leaves unset oneof members out', () => {
    expect(writeJson(CLASSIFY_RESPONSE, {})).toEqual({
      action: 'ACTION_UNSPECIFIED',
      proxy: null,
      matchedClaim: null,
    });
    expect(writeJson(CLASSIFY_REQUEST, { claims: [{ project_id: '9' }] })).toEqual({
      type: 'UNSPECIFIED',
      value: '',
      claims: [{ projectId: '9' }],
    });
    expect(
      writeJson(CLASSIFY_REQUEST, { type: 'SESSION_PREFIX', value: 'cell-2' }, { emitUnpopulated: false }),
    ).toEqual({ type: 'SESSION_PREFIX', value: 'cell-2' });
  });

  it('int64 outside the range is refused', () => {
    expect(() => readJson(CLAIM, { userId: '9223372036854775808' })).toThrow(
      /invalid value for int64 field userId/,
    );
    expect(readJson(CLAIM, { userId: '9223372036854775807' })).toMatchObject({
      user_id: '9223372036854775807',
    });
    expect(() => readJson(CLAIM, { userId: 1.5 })).toThrow(/int64/);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPublicPath } from './public-path.js';

describe('checkPublicPath', () => {
  it.each([
    ['/api/v4/internal', 'internal'],
    ['/api/v4/internal/', 'internal'],
    ['/api/v4/internal/allowed', 'internal'],
    ['/api/v4/internal.json', 'internal'],
    ['//api///v4/internal/check', 'internal'],
    ['/api/v4/./internal/check', 'internal'],
    ['/api/v4/projects/../internal/check', 'internal'],
    ['/../api/v4/internal/check', 'internal'],
    ['/api/v4/%69%6Eternal/check', 'internal'],
    ['/api%2fv4%2finternal', 'internal'],
    ['/Api/V4/INTERNAL/check', 'internal'],
    ['/api/v4/internal;jsessionid=1/check', 'internal'],
    ['/api/v4/internals', 'public'],
    ['/api/v4/user', 'public'],
    ['/api/v3/internal/check', 'public'],
    ['/my-company/internal/api/v4', 'public'],
    ['/', 'public'],
    ['/x/%E0%A4%A', 'malformed'],
    ['/%', 'malformed'],
  ])('%s is %s', (path, verdict) => {
    expect(checkPublicPath(path)).toBe(verdict);
  });

  it('refuses every spelling of an internal API path a router would resolve to it', () => {
    const segment = (word: string) =>
      fc
        .array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: word.length, maxLength: word.length })
        .map((flags) =>
          [...word]
            .map((ch, i) => {
              const [upper, encode] = flags[i] as [boolean, boolean];
              const c = upper ? ch.toUpperCase() : ch;
              return encode ? `%${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c;
            })
            .join(''),
        );
    const separator = fc.constantFrom('/', '//', '/./', '/%2F', '/x/../');
    fc.assert(
      fc.property(
        segment('api'),
        segment('v4'),
        segment('internal'),
        fc.array(separator, { minLength: 3, maxLength: 3 }),
        fc.constantFrom('', '/allowed', '/cells/learn', '.json', '/'),
        (api, v4, internal, [s1, s2, s3], tail) => {
          expect(checkPublicPath(`${s1}${api}${s2}${v4}${s3}${internal}${tail}`)).toBe('internal');
        },
      ),
    );
  });
});

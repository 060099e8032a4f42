import { describe, expect, it } from 'vitest';
import { claimPath } from './path-claim.js';

describe('claimPath', () => {
  it('strips one format suffix of the last segment, at its last dot', () => {
    expect(claimPath('/john.doe')).toBe('/john.doe');
    expect(claimPath('/john.doe.json')).toBe('/john.doe');
    expect(claimPath('/g/p/-/tree/main.json')).toBe('/g/p/-/tree/main');
    expect(claimPath('/g/p.git/info/refs')).toBe('/g/p.git/info/refs');
  });
  it('does not classify reserved top-level words', () => {
    for (const p of [
      '/api/v4/projects',
      '/admin/users',
      '/-/profile',
      '/users/sign_in',
      '//api/v4',
      '/groups/g/-/milestones',
      '/projects/42',
      '/.well-known/openid-configuration',
      '/robots.txt',
      '/help.json',
      '/Admin',
    ])
      expect(claimPath(p)).toBeUndefined();
    expect(claimPath('/apis/x')).toBe('/apis/x');
  });
  it("classifies two-step sign-in's /users/sign_in?login=<u> by the user's namespace", () => {
    expect(claimPath('/users/sign_in?login=kit')).toBe('/kit');
    expect(claimPath('/users/sign_in?redirect=/x')).toBeUndefined();
    expect(claimPath('/users/sign_in?login=../api')).toBeUndefined();
    expect(claimPath('/north-group.json?x=1')).toBe('/north-group');
  });
});

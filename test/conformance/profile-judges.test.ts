/**
 * S13-shape's, S13-jwt's, S13-lfs's and S14's judgements can fail: fed the journal a router of an older
 * gitlab-shell shape (or one that hides the cell's 404) leaves, each is a FAIL naming what was seen.
 * (One request per push, 14.56's shape, is proven on a router process: `can-fail.test.ts`.)
 * Entries are in the shape a real world writes (`lib/contracts/world.ts`), trimmed to what they read.
 */
import { describe, expect, it } from 'vitest';
import { judgeLfsPush } from '../../conformance/checks/edge-lfs.js';
import { judgeExpiredJwt } from '../../conformance/checks/expired-jwt.js';
import { judgeFreshJwt, judgePushShape } from '../../conformance/checks/push-shape.js';
import type { JournalEntry } from '../../lib/contracts/world.js';

let seq = 0;
const T0 = Date.parse('2026-12-05T00:00:00.000Z');
const push = (
  atMs: number,
  durationMs: number,
  bytesIn: number,
  tail: string,
  iatMs = atMs,
): JournalEntry => ({
  seq: ++seq,
  time: new Date(T0 + atMs).toISOString(),
  cell: 'conf_north',
  service: 'bridge',
  endpoint: 'POST /north-group/north-project.git/ssh-receive-pack',
  status: 200,
  durationMs,
  bytesIn,
  bytesOut: 100,
  fields: { stdin_tail: tail },
  jwt: { 'gitlab-shell-api-request': { iat: Math.floor((T0 + iatMs) / 1000), gl_id: 'user-1' } },
});

describe('S13-shape', () => {
  it('passes 0000, then the pack after the hook', () => {
    expect(judgePushShape([push(0, 50, 4, '0000'), push(3100, 200, 900, 'PACK..')])).toEqual({
      kind: 'pass',
    });
  });
  it('fails a first body that is not exactly 0000, and a second request opened before the hook ended', () => {
    expect(judgePushShape([push(0, 50, 12, 'abc0000'), push(3100, 200, 900, 'x')])).toMatchObject({
      kind: 'fail',
      seen: expect.stringContaining('request 1 body: 12 bytes'),
    });
    expect(judgePushShape([push(0, 50, 4, '0000'), push(60, 3200, 900, 'x')])).toMatchObject({
      kind: 'fail',
      seen: expect.stringMatching(/^request 2 opened 10 ms after request 1 ended/),
    });
  });
});

describe('S13-jwt', () => {
  it('passes a fresh JWT per request and fails one reused from request 1 (14.57.4)', () => {
    expect(judgeFreshJwt([push(0, 50, 4, '0000'), push(3100, 200, 900, 'x')])).toEqual({ kind: 'pass' });
    expect(judgeFreshJwt([push(0, 50, 4, '0000'), push(3100, 200, 900, 'x', 0)])).toEqual({
      kind: 'fail',
      seen: 'request 2: Shell JWT signed 3.1 s before the request (want a fresh one)',
    });
  });
});

describe('S14', () => {
  const tunnel404 = {
    ...push(0, 5, 0, ''),
    endpoint: 'POST /north-group/north-project.git/ssh-upload-pack',
    status: 404,
  };
  it('passes the 404 passed on as "Not found", exit 1', () => {
    expect(
      judgeExpiredJwt([tunnel404], { code: 1, stdout: '', stderr: 'remote: ERROR: Not found\n' }),
    ).toEqual({
      kind: 'pass',
    });
  });
  it("fails a router that hides the cell's answer, and one whose tunnel never got the 404", () => {
    expect(
      judgeExpiredJwt([tunnel404], { code: 1, stdout: '', stderr: 'Remote repository is unavailable\n' }),
    ).toMatchObject({ kind: 'fail', seen: expect.stringContaining('Remote repository is unavailable') });
    expect(judgeExpiredJwt([{ ...tunnel404, status: 200 }], { code: 0, stdout: '', stderr: '' })).toEqual({
      kind: 'fail',
      seen: "tunnel answers 200 (want the cell's 404)",
    });
  });
});

describe('S13-lfs', () => {
  const ok = { code: 0, stdout: '', stderr: '' };
  const upload = (cell: string, status: number): JournalEntry => ({
    ...push(1000, 300, 262_144, ''),
    cell,
    status,
    endpoint: 'PUT /north-group/north-project.git/gitlab-lfs/objects/ab12/262144',
  });
  const moved = (cell: string): JournalEntry => ({
    ...push(67_700, 20, 300, ''),
    service: 'rails',
    cell,
    endpoint: '/api/v4/internal/post_receive',
    fields: { changes: `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/kit-s13-lfs-1` },
  });
  const dead = T0 + 66_000;
  const B = 'kit-s13-lfs-1';
  const good = [push(0, 50, 4, '0000'), upload('conf_north', 200), push(67_500, 200, 900, 'PACK')];
  it('passes the object and the moved ref at the owning cell, the pack after request 1 died', () => {
    expect(judgeLfsPush([...good, moved('conf_north')], ok, dead, B)).toEqual({ kind: 'pass' });
  });
  it("fails git's error, a misplaced upload or ref, and a pack sent while the token lived", () => {
    const refused = { code: 128, stdout: '', stderr: 'remote: \nremote: ERROR: Not found\nfatal: hung up\n' };
    expect(judgeLfsPush([], refused, dead, B)).toEqual({
      kind: 'fail',
      seen: 'push exited 128: remote: ERROR: Not found | fatal: hung up',
    });
    const closed = { code: null, stdout: '', stderr: 'remote: ERROR: Remote repository is unavailable\n' };
    expect(judgeLfsPush([], closed, dead, B)).toEqual({
      kind: 'fail',
      seen: 'push was killed by a signal: remote: ERROR: Remote repository is unavailable',
    });
    expect(judgeLfsPush([push(0, 50, 4, '0000'), upload('conf_legacy', 200)], ok, dead, B)).toEqual({
      kind: 'fail',
      seen: "no LFS upload reached conf_north's bridge (seen: conf_legacy 200)",
    });
    expect(judgeLfsPush([...good, moved('conf_legacy')], ok, dead, B)).toEqual({
      kind: 'fail',
      seen: `post_receive of refs/heads/${B} at conf_legacy 200 (want conf_north)`,
    });
    const early = [push(0, 50, 4, '0000'), upload('conf_north', 200), push(6000, 200, 900, 'PACK')];
    expect(judgeLfsPush([...early, moved('conf_north')], ok, dead, B)).toMatchObject({
      kind: 'fail',
      seen: expect.stringMatching(
        /^request 2 reached the cell 60\.0 s before request 1's Shell JWT was dead/,
      ),
    });
  });
});

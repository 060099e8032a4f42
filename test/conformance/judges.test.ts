/**
 * S3's, S5's, S9's and S11's judgements on journals no router process of `can-fail.test.ts` leaves
 * (those prove each check fails against a broken router: NOT_FOUND retried, a 3xx followed,
 * Git-Protocol dropped, account commands at the user's cell): a router that refuses instead of asking
 * the legacy cell, one that swallows a redirect, a Git-Protocol git never set, a Shell JWT without
 * gl_id that a cell accepted, a route claim for an account command; each a FAIL naming what was seen,
 * and the journal of a conforming router passes. Entries are in the shape
 * a real world writes (`lib/contracts/world.ts`), trimmed to what the judges read.
 */
import { describe, expect, it } from 'vitest';
import { judgeNoRedirect } from '../../conformance/checks/cell-answers.js';
import { judgeOneClassify } from '../../conformance/checks/classify.js';
import { judgeKeySession } from '../../conformance/checks/ssh-more.js';
import { judgePrefixed } from '../../conformance/checks/token-prefix.js';
import { judgeTunnel } from '../../conformance/checks/tunnel.js';
import type { JournalEntry } from '../../lib/contracts/world.js';

let seq = 0;
const entry = (e: Partial<JournalEntry>): JournalEntry => ({
  seq: ++seq,
  time: '2026-12-02T00:00:00.000Z',
  cell: null,
  service: 'rails',
  endpoint: '/',
  status: 200,
  durationMs: 1,
  bytesIn: 0,
  bytesOut: 0,
  ...e,
});
const classify = (status: string) =>
  entry({
    service: 'topology-service',
    endpoint: '/gitlab.cells.topology_service.ClassifyService/Classify',
    fields: { claim: { type: 'route', value: 'north-group' } },
    status,
  });
const allowed = (cell: string, status: number) =>
  entry({ cell, endpoint: '/api/v4/internal/allowed', status });
const tunnel = (headers: Record<string, string>, glId: string | undefined) =>
  entry({
    cell: 'conf_north',
    service: 'bridge',
    endpoint: 'POST /north-group/north-project.git/ssh-upload-pack',
    headers,
    jwt: { 'gitlab-shell-api-request': glId === undefined ? { iss: 'gitlab-shell' } : { gl_id: glId } },
  });

describe('S5: one Classify for a non-transient code', () => {
  it('passes one NOT_FOUND then the legacy cell', () => {
    expect(
      judgeOneClassify([classify('NOT_FOUND'), allowed('conf_legacy', 404)], 'NOT_FOUND', 'conf_legacy'),
    ).toEqual({ kind: 'pass' });
  });
  it('fails a router that refuses instead of asking the legacy cell', () => {
    expect(judgeOneClassify([classify('PERMISSION_DENIED')], 'PERMISSION_DENIED', 'conf_legacy')).toEqual({
      kind: 'fail',
      seen: 'PERMISSION_DENIED: /allowed at none (want the legacy cell conf_legacy)',
    });
  });
});

describe('S9: a 3xx on /allowed is not followed', () => {
  const failed = { code: 1, stdout: '', stderr: 'ERROR: …' };
  it('passes a redirect that ends the session with an error', () => {
    expect(judgeNoRedirect([allowed('conf_north', 302)], failed, 302)).toEqual({ kind: 'pass' });
  });
  it('fails a router that swallows the redirect and succeeds', () => {
    expect(judgeNoRedirect([allowed('conf_north', 307)], { ...failed, code: 0 }, 307)).toEqual({
      kind: 'fail',
      seen: '307: ssh exited 0 after a redirect',
    });
  });
});

describe('S11: the tunnel request shape', () => {
  it('passes Git-Protocol when set and none when not, with gl_id', () => {
    expect(judgeTunnel([tunnel({ 'git-protocol': 'version=2' }, 'user-1')], 'version=2')).toEqual({
      kind: 'pass',
    });
    expect(judgeTunnel([tunnel({}, 'user-1')], undefined)).toEqual({ kind: 'pass' });
  });
  it('fails a router that sends Git-Protocol git never set', () => {
    expect(judgeTunnel([tunnel({ 'git-protocol': 'version=2' }, 'user-1')], undefined)).toEqual({
      kind: 'fail',
      seen: 'no GIT_PROTOCOL: Git-Protocol header "version=2"',
    });
  });
  it('fails a Shell JWT without gl_id', () => {
    expect(judgeTunnel([tunnel({}, undefined)], undefined)).toEqual({
      kind: 'fail',
      seen: 'no GIT_PROTOCOL: Shell JWT claims {"iss":"gitlab-shell"} have no gl_id',
    });
  });
});

describe("S3: a key session's account commands go to the default cell", () => {
  const discover = (cell: string) => entry({ cell, endpoint: '/api/v4/internal/discover' });
  it('passes discover at the legacy cell with no claim', () => {
    expect(judgeKeySession([discover('conf_legacy')], '/api/v4/internal/discover', 'conf_legacy')).toEqual({
      kind: 'pass',
    });
  });
  it('fails a router that classifies a route claim for it', () => {
    expect(
      judgeKeySession([classify('OK'), discover('conf_legacy')], '/api/v4/internal/discover', 'conf_legacy'),
    ).toEqual({
      kind: 'fail',
      seen: '/api/v4/internal/discover: Classify of [{"type":"route","value":"north-group"}] (want none)',
    });
  });
});

describe('H4: tokens behind an instance-wide prefix', () => {
  it('passes when every prefixed token is routed, is the documented divergence when one falls back', () => {
    expect(judgePrefixed(['routed', 'routed'])).toEqual({ kind: 'pass' });
    expect(judgePrefixed(['legacy', 'routed']).kind).toBe('divergence');
  });
  it('fails a refusal or a misroute, naming it', () => {
    expect(judgePrefixed(['legacy', 'prefixed personal access token: answered 401'])).toEqual({
      kind: 'fail',
      seen: 'prefixed personal access token: answered 401',
    });
  });
});

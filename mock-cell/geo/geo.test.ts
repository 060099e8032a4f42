import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jwtKey } from '../../lib/jwt.js';
import {
  demoModel,
  demoTopology,
  keyIdOf,
  preauthHeaders,
  shellHeaders,
  tempDir,
  testApp,
} from '../test-support/fixtures.js';
import { TopologyModel } from '../topology.js';
import type { Topology } from '../topology-types.js';
import { GEO_TEXTS } from './preauth.js';
import { loadSiteModel } from './site.js';
import { type GeoNodeKey, signGeoToken, verifyGeoToken } from './token.js';

const tmp = tempDir('mock-cell-geo-');
afterAll(() => tmp.cleanup());

const secretFile = (name: string, secret: string) => {
  const path = join(tmp.dir, name);
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  return path;
};
const PRIMARY_KEY: GeoNodeKey = {
  site: 'cell_us0',
  accessKey: 'primary-key',
  secret: jwtKey('primary-secret'),
};
const SECONDARY_KEY: GeoNodeKey = { site: 'us0-geo', accessKey: 'geo-key', secret: jwtKey('geo-secret') };

function withGeo(t: Topology, fetchFromPrimary?: 'always'): void {
  t.geoSites = [
    {
      name: 'cell_us0',
      cell: 'cell_us0',
      role: 'primary',
      url: 'http://127.0.0.1:4001',
      ssh: '127.0.0.1:2222',
      accessKey: PRIMARY_KEY.accessKey,
      secretAccessKeyFile: secretFile('primary', 'primary-secret'),
    },
    {
      name: 'us0-geo',
      cell: 'cell_us0',
      role: 'secondary',
      url: 'http://127.0.0.1:4011',
      ssh: '127.0.0.1:2224',
      gitaly: { address: 'tcp://127.0.0.1:9011', storages: { default: join(tmp.dir, 'replicas') } },
      accessKey: SECONDARY_KEY.accessKey,
      secretAccessKeyFile: secretFile('secondary', 'geo-secret'),
      ...(fetchFromPrimary ? { fetchFromPrimary } : {}),
    },
  ];
}

function siteModel(fetchFromPrimary?: 'always'): TopologyModel {
  const t = demoTopology(tmp.dir);
  withGeo(t, fetchFromPrimary);
  const file = join(tmp.dir, `topology-${fetchFromPrimary ?? 'behind'}.json`);
  writeFileSync(file, JSON.stringify(t));
  return loadSiteModel(file, 'us0-geo');
}

const primary = testApp(
  demoModel(tmp.dir, (t) => withGeo(t)),
  'cell_us0',
);
const secondary = testApp(siteModel(), 'cell_us0', { geoSite: 'us0-geo' });
const always = testApp(siteModel('always'), 'cell_us0', { geoSite: 'us0-geo' });
afterAll(async () => {
  await Promise.all([primary.close(), secondary.close(), always.close()]);
});

const PUSH = '/gitlab-org/gitlab-test.git/ssh-receive-pack';
const geoHeaders = async (data: Record<string, unknown>, key = SECONDARY_KEY, now?: number) => ({
  ...(await preauthHeaders()),
  authorization: await signGeoToken(key, data, now),
});

describe('GL-Geo tokens', () => {
  it('verify with the node of the access key; forged, expired, unknown or malformed ones do not', async () => {
    const nodes = [PRIMARY_KEY, SECONDARY_KEY];
    const good = await verifyGeoToken(await signGeoToken(SECONDARY_KEY, { scope: 'a/b' }), nodes);
    expect(good).toMatchObject({ ok: true, node: { site: 'us0-geo' }, data: { scope: 'a/b' } });
    const forged = await signGeoToken({ ...SECONDARY_KEY, secret: jwtKey('guess') }, { scope: 'a/b' });
    expect(await verifyGeoToken(forged, nodes)).toEqual({ ok: false, reason: 'invalid' });
    // 1 minute of validity plus 60 s of leeway: two minutes and a bit ago is expired.
    const now = Math.floor(Date.now() / 1000);
    const old = await signGeoToken(SECONDARY_KEY, { scope: 'a/b' }, now - 125);
    expect(await verifyGeoToken(old, nodes)).toEqual({ ok: false, reason: 'signature-time' });
    const early = await signGeoToken(SECONDARY_KEY, { scope: 'a/b' }, now + 125);
    expect(await verifyGeoToken(early, nodes)).toEqual({ ok: false, reason: 'signature-time' });
    const leeway = await signGeoToken(SECONDARY_KEY, { scope: 'a/b' }, now - 100);
    expect((await verifyGeoToken(leeway, nodes)).ok).toBe(true);
    const unknown = await signGeoToken({ ...SECONDARY_KEY, accessKey: 'other' }, {});
    expect(await verifyGeoToken(unknown, nodes)).toEqual({ ok: false, reason: 'no-node' });
    for (const header of [undefined, 'GL-Geo', 'GL-Geo nocolon', 'Bearer a:b', 'GL-Geo a:b c'])
      expect((await verifyGeoToken(header, nodes)).ok).toBe(false);
  });
});

describe('primary: GL-Geo pre-authorization', () => {
  it('authorizes the actor of gl_id, all refs shown; without gl_id the node itself (:geo) may fetch', async () => {
    const res = await primary.inject({
      method: 'POST',
      url: PUSH,
      headers: await geoHeaders({ scope: 'gitlab-org/gitlab-test', gl_id: `key-${keyIdOf('bob')}` }),
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ GL_ID: 'user-3', GL_USERNAME: 'bob', ShowAllRefs: true });
    const fetch = await primary.inject({
      method: 'POST',
      url: '/gitlab-org/gitlab-test.git/ssh-upload-pack',
      headers: await geoHeaders({ scope: 'gitlab-org/gitlab-test' }),
    });
    expect(fetch.statusCode).toBe(200);
    expect(JSON.parse(fetch.body)).toMatchObject({ GL_ID: '', GL_USERNAME: '', ShowAllRefs: true });
    const push = await primary.inject({
      method: 'POST',
      url: PUSH,
      headers: await geoHeaders({ scope: 'gitlab-org/gitlab-test' }),
    });
    expect(push.statusCode).toBe(403);
  });

  it('401s forged, expired (Invalid signature time) and wrong-scope tokens with GitLab texts; 403s an unknown push user', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [
        await geoHeaders({ scope: 'gitlab-org/gitlab-test' }, { ...SECONDARY_KEY, secret: jwtKey('x') }),
        401,
        GEO_TEXTS.badToken,
      ],
      [
        await geoHeaders(
          { scope: 'gitlab-org/gitlab-test' },
          SECONDARY_KEY,
          Math.floor(Date.now() / 1000) - 300,
        ),
        401,
        GEO_TEXTS.invalidSignatureTime,
      ],
      [await geoHeaders({ scope: 'gitlab-org/gitlab' }), 401, GEO_TEXTS.unauthorizedScope],
      [
        await geoHeaders({ scope: 'gitlab-org/gitlab-test', gl_id: 'user-999' }),
        403,
        GEO_TEXTS.invalidPushUser,
      ],
    ];
    for (const [headers, status, text] of cases) {
      const res = await primary.inject({ method: 'POST', url: PUSH, headers });
      expect([res.statusCode, res.body]).toEqual([status, text]);
    }
  });
});

describe('secondary', () => {
  const allowed = async (app: typeof secondary, action: string, user: 'bob' | 'alice' = 'bob') =>
    app.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      headers: await shellHeaders(),
      payload: {
        action,
        project: 'gitlab-org/gitlab-test.git',
        key_id: String(keyIdOf(user)),
        changes: '_any',
        protocol: 'ssh',
      },
    });

  it('answers a push with the geo_proxy_to_primary custom action (300) and its console messages', async () => {
    const res = await allowed(secondary, 'git-receive-pack');
    expect(res.statusCode).toBe(300);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({
      status: true,
      payload: {
        action: 'geo_proxy_to_primary',
        data: {
          primary_repo: 'http://127.0.0.1:4001/gitlab-org/gitlab-test.git',
          gl_username: 'bob',
          gl_id: 'user-3',
          geo_proxy_push_ssh_direct_to_primary: true,
          geo_proxy_fetch_ssh_direct_to_primary: true,
        },
      },
      gl_console_messages: [
        'This request to a Geo secondary node will be forwarded to the',
        'Geo primary node:',
        '',
        '  ssh://git@127.0.0.1:2222/gitlab-org/gitlab-test.git',
      ],
    });
    const verdict = await verifyGeoToken(body.payload.data.request_headers.Authorization, [SECONDARY_KEY]);
    expect(verdict).toMatchObject({
      ok: true,
      data: { scope: 'gitlab-org/gitlab-test', gl_id: `key-${keyIdOf('bob')}` },
    });
  });

  it('serves a fetch itself from its own Gitaly while current; with fetchFromPrimary "always" proxies it', async () => {
    const local = await allowed(secondary, 'git-upload-pack');
    expect(local.statusCode).toBe(200);
    expect(JSON.parse(local.body).gitaly.address).toBe('tcp://127.0.0.1:9011');
    expect((await allowed(always, 'git-upload-pack')).statusCode).toBe(300);
  });

  it('refuses a Geo-signed push at a secondary (Cannot push to secondary.)', async () => {
    const res = await secondary.inject({
      method: 'POST',
      url: PUSH,
      headers: await geoHeaders({ scope: 'gitlab-org/gitlab-test', gl_id: 'user-3' }),
    });
    expect([res.statusCode, res.body]).toEqual([403, GEO_TEXTS.pushToSecondary]);
  });

  it('takes update notices only from the primary, for the signed scope', async () => {
    const notice = async (key: GeoNodeKey, scope: string) =>
      secondary.inject({
        method: 'POST',
        url: '/api/v4/geo/repository_updated',
        headers: { authorization: await signGeoToken(key, { scope }) },
        payload: { project: 'gitlab-org/gitlab-test', refs: {} },
      });
    expect((await notice(SECONDARY_KEY, 'gitlab-org/gitlab-test')).statusCode).toBe(401);
    expect((await notice(PRIMARY_KEY, 'gitlab-org/gitlab')).body).toBe(GEO_TEXTS.unauthorizedScope);
  });
});

describe('geoSites validation', () => {
  it('refuses to serve a site the topology does not have as a secondary', () => {
    const t = demoTopology(tmp.dir);
    withGeo(t);
    const file = join(tmp.dir, 'topology-sites.json');
    writeFileSync(file, JSON.stringify(t));
    expect(() => loadSiteModel(file, 'nowhere')).toThrow(
      'geoSite: no secondary Geo site "nowhere" in the topology',
    );
    expect(() => loadSiteModel(file, 'cell_us0')).toThrow(/no secondary Geo site "cell_us0"/);
  });

  it('names every problem', () => {
    const t = demoTopology(tmp.dir);
    withGeo(t);
    const sites = t.geoSites ?? [];
    t.geoSites = [
      { ...(sites[1] as NonNullable<Topology['geoSites']>[number]), gitaly: undefined, cell: 'nowhere' },
    ];
    expect(() => TopologyModel.fromJson(t)).toThrow(
      /unknown cell "nowhere"[\s\S]*own "gitaly"[\s\S]*0 primaries/,
    );
  });
});

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushCount, lsRefs, PROTOCOL_V2 } from '../test-support/git-wire.js';
import { type Harness, PROJECT, type RunningBridge, startHarness } from '../test-support/harness.js';
import { openTunnel, simpleRequest } from '../test-support/tunnel-client.js';

let h: Harness;
/** In front of the mock cell, for tunnels. */
let b: RunningBridge;
/** In front of the fake Rails, whose echo shows what a proxied request carried. */
let echoBridge: RunningBridge;
let ca: Buffer;
const https = (r: RunningBridge) => r.url.replace('http:', 'https:');
const STREAM_WINDOW = 3 * 1024 * 1024;
const CONNECTION_WINDOW = 12 * 1024 * 1024;

beforeAll(async () => {
  h = await startHarness();
  const key = join(h.dir, 'key.pem');
  const cert = join(h.dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1'].concat([
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  ca = readFileSync(cert);
  const tlsDeps = { tls: { cert: ca, key: readFileSync(key) } };
  b = await h.startBridge(
    { h2StreamWindowBytes: STREAM_WINDOW, h2ConnectionWindowBytes: CONNECTION_WINDOW },
    tlsDeps,
  );
  echoBridge = await h.startBridge({ railsUrl: h.rails.url }, tlsDeps);
  h.createRepo(PROJECT);
});
afterAll(async () => {
  await h?.close();
});

describe('one port, every protocol', () => {
  const cases = [
    { name: 'HTTP/1.1 cleartext', protocol: 'h1', tlsOn: false },
    { name: 'h2c (prior knowledge)', protocol: 'h2', tlsOn: false },
    { name: 'TLS, ALPN http/1.1', protocol: 'h1', tlsOn: true },
    { name: 'TLS, ALPN h2', protocol: 'h2', tlsOn: true },
  ] as const;

  for (const c of cases) {
    it(`tunnels full duplex to git over ${c.name}`, async () => {
      const id = `proto-${c.protocol}-${c.tlsOn}`;
      const t = openTunnel(
        c.protocol,
        c.tlsOn ? https(b) : b.url,
        `/${PROJECT}.git/ssh-upload-pack`,
        { 'gitlab-shell-api-request': await h.token(), ...PROTOCOL_V2, 'x-request-id': id },
        { ca },
      );
      expect(await t.status).toBe(200);
      await t.waitFor((buf) => flushCount(buf) === 1);
      t.write(lsRefs());
      await t.waitFor((buf) => flushCount(buf) === 2);
      t.end(lsRefs(['refs/tags/']));
      expect(await t.done).toBe(true);
      expect(flushCount(t.received())).toBe(3);
      const line = b.logs.tunnels().find((l) => l.correlation_id === id);
      expect(line).toMatchObject({ protocol: c.protocol, outcome: 'ok' });
    });

    it(`proxies over ${c.name} with the right X-Forwarded-Proto`, async () => {
      const r = await simpleRequest(c.protocol, c.tlsOn ? https(echoBridge) : echoBridge.url, {
        path: '/api/v4/internal/check',
        ca,
      });
      expect(r.status).toBe(200);
      const echo = JSON.parse(r.body.toString()) as { headers: Record<string, string> };
      expect(echo.headers['x-forwarded-proto']).toBe(c.tlsOn ? 'https' : 'http');
    });
  }

  it('offers h2 and http/1.1 by ALPN', async () => {
    const negotiated = (protocols: string[]) =>
      new Promise<string | false | null>((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port: b.port, ca, ALPNProtocols: protocols }, () => {
          resolve(s.alpnProtocol);
          s.end();
        });
        s.on('error', reject);
      });
    expect(await negotiated(['h2', 'http/1.1'])).toBe('h2');
    expect(await negotiated(['http/1.1'])).toBe('http/1.1');
  });
});

describe('HTTP/2 flow-control windows', () => {
  it('advertises the configured stream window and opens the connection window', async () => {
    const session = http2.connect(b.url);
    try {
      const settings = await new Promise<http2.Settings>((resolve) =>
        session.once('remoteSettings', resolve),
      );
      expect(settings.initialWindowSize).toBe(STREAM_WINDOW);
      await new Promise((r) => setTimeout(r, 100));
      expect(session.state.remoteWindowSize).toBe(CONNECTION_WINDOW);
    } finally {
      session.close();
    }
  });
});

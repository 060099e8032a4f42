import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type RunningBridge, startHarness } from '../test-support/harness.js';
import { openTunnel, simpleRequest } from '../test-support/tunnel-client.js';

let h: Harness;
let b: RunningBridge;
let ca: Buffer;
let httpsUrl: string;
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
  b = await h.startBridge(
    { h2StreamWindowBytes: STREAM_WINDOW, h2ConnectionWindowBytes: CONNECTION_WINDOW },
    { tls: { cert: ca, key: readFileSync(key) } },
  );
  httpsUrl = b.url.replace('http:', 'https:');
  h.gitaly.setBehaviour('echo/cat.git', { argv: ['cat'] });
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
    it(`tunnels full duplex over ${c.name}`, async () => {
      const t = openTunnel(
        c.protocol,
        c.tlsOn ? httpsUrl : b.url,
        '/echo/cat.git/ssh-upload-pack',
        { 'gitlab-shell-api-request': await h.token(), 'x-request-id': `proto-${c.protocol}-${c.tlsOn}` },
        { ca },
      );
      expect(await t.status).toBe(200);
      t.write('one ');
      await t.waitFor((buf) => buf.toString() === 'one ');
      t.end('two');
      expect(await t.done).toBe(true);
      expect(t.received().toString()).toBe('one two');
      const line = b.logs.tunnels().find((l) => l.correlation_id === `proto-${c.protocol}-${c.tlsOn}`);
      expect(line?.protocol).toBe(c.protocol);
    });

    it(`proxies over ${c.name} with the right X-Forwarded-Proto`, async () => {
      const r = await simpleRequest(c.protocol, c.tlsOn ? httpsUrl : b.url, {
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

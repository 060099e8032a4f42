import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config.js';
import { hostKeyFilesOf, loadRouterConfig } from '../config.js';
import { loadTrustedCas } from '../ssh/cert-auth.js';
import { loadHostKeys } from '../ssh/host-key.js';

/** The SSH front's settings (gitlab-sshd's): host keys, limits, PROXY protocol, certificates. */
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-sshd-config-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const cells = [{ id: 1, name: 'cell_us0', legacy: true, region: 'us', url: 'http://127.0.0.1:4001' }];
const base = { shellSecretFile: '/s', region: 'us', cells };

function load(file: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const path = join(dir, 'router.json');
  writeFileSync(path, JSON.stringify(file));
  return loadRouterConfig(['node', 'main.js', '--config', path], env);
}

describe('host key settings', () => {
  it('takes hostKeyFiles (file list or comma-separated env), hostKeyFile joins them once', () => {
    expect(hostKeyFilesOf(load({ ...base, hostKeyFile: '/k' }))).toEqual(['/k']);
    expect(hostKeyFilesOf(load({ ...base, hostKeyFiles: ['/a', '/b'], hostKeyFile: '/a' }))).toEqual([
      '/a',
      '/b',
    ]);
    const env = load(base, { ROUTER_HOST_KEY_FILES: '/r, /e' });
    expect(hostKeyFilesOf(env)).toEqual(['/r', '/e']);
  });

  it('needs at least one host key file', () => {
    expect(() => load(base)).toThrow(ConfigError);
    expect(() => load(base)).toThrow(/hostKeyFiles \(ROUTER_HOST_KEY_FILES\)/);
    expect(() => load({ ...base, hostKeyFiles: 5 })).toThrow(/list of file paths/);
  });

  it('refuses two keys of one type and a file that is no private key', async () => {
    const a = join(dir, 'one_ed25519_key');
    const b = join(dir, 'two_ed25519_key');
    await expect(loadHostKeys([a, b])).rejects.toThrow(/second ssh-ed25519 key/);
    const bogus = join(dir, 'bogus_key');
    writeFileSync(bogus, 'not a key\n');
    await expect(loadHostKeys([bogus])).rejects.toThrow(/not an unencrypted private key/);
  });
});

describe('limits and PROXY protocol settings', () => {
  const withKey = { ...base, hostKeyFile: '/k' };

  it("defaults to gitlab-sshd's values", () => {
    expect(load(withKey)).toMatchObject({
      maxSessions: 10,
      keepaliveIntervalMs: 15_000,
      keepaliveCountMax: 3,
      loginGraceMs: 60_000,
      maxStartups: undefined,
      perSourceMaxStartups: undefined,
      proxyProtocol: false,
      proxyPolicy: 'use',
      proxyAllowed: [],
      proxyHeaderTimeoutMs: 500,
    });
  });

  it('reads them from the environment', () => {
    const config = load(withKey, {
      ROUTER_MAX_SESSIONS: '4',
      ROUTER_MAX_STARTUPS: '10:30:100',
      ROUTER_PER_SOURCE_MAX_STARTUPS: '2',
      ROUTER_PROXY_PROTOCOL: 'true',
      ROUTER_PROXY_POLICY: 'require',
      ROUTER_PROXY_ALLOWED: '10.0.0.0/8, 192.0.2.1, 2001:db8::/32',
    });
    expect(config).toMatchObject({
      maxSessions: 4,
      maxStartups: { start: 10, rate: 30, full: 100 },
      perSourceMaxStartups: 2,
      proxyProtocol: true,
      proxyPolicy: 'require',
      proxyAllowed: ['10.0.0.0/8', '192.0.2.1', '2001:db8::/32'],
    });
  });

  it.each([
    [{ proxyPolicy: 'trust' }, 'proxyPolicy'],
    [{ proxyAllowed: ['10.0.0.0/33'] }, 'proxyAllowed (ROUTER_PROXY_ALLOWED)[0] must be an address or CIDR'],
    [{ proxyAllowed: ['example.com'] }, 'must be an address or CIDR'],
    [{ maxStartups: '10:30' }, 'maxStartups (ROUTER_MAX_STARTUPS) must be "start:rate:full"'],
    [{ maxSessions: 0 }, 'maxSessions'],
  ])('refuses %j', (extra, message) => {
    expect(() => load({ ...withKey, ...extra })).toThrow(message);
  });
});

describe('trustedUserCaKeys', () => {
  it('reads OpenSSH public key lines and refuses anything else with the file and line', () => {
    const good = join(dir, 'cas.pub');
    writeFileSync(
      good,
      '# CAs\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEk0a4YOa3OX3EY1q0p9sRbm1wL4Kc2x0I6c8bH7l3X9 ca\n\n',
    );
    expect([...loadTrustedCas([good])]).toEqual([
      'AAAAC3NzaC1lZDI1NTE5AAAAIEk0a4YOa3OX3EY1q0p9sRbm1wL4Kc2x0I6c8bH7l3X9',
    ]);
    const bad = join(dir, 'bad.pub');
    writeFileSync(
      bad,
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEk0a4YOa3OX3EY1q0p9sRbm1wL4Kc2x0I6c8bH7l3X9\nnot a key\n',
    );
    expect(() => loadTrustedCas([bad])).toThrow(`${bad}:2 is not an OpenSSH public key line`);
    expect(() => loadTrustedCas([join(dir, 'missing.pub')])).toThrow(ConfigError);
    expect(load({ ...base, hostKeyFile: '/k', trustedUserCaKeys: [good] }).trustedUserCaKeys).toEqual([good]);
  });
});

import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../lib/config.js';
import { loadGitalyConfig } from './config.js';
import { cleanup, tempDir, writeSecret } from './test-support/harness.js';

afterEach(cleanup);

function base() {
  const dir = tempDir();
  const storage = join(dir, 'storage');
  mkdirSync(storage);
  return {
    dir,
    file: {
      listen: '127.0.0.1:9001',
      storages: { default: storage },
      tokenFile: writeSecret(dir, 'token', 'the-token'),
      gitlabUrl: 'http://127.0.0.1:3001/',
      gitlabSecretFile: writeSecret(dir, 'shell', 'shell-secret'),
    },
  };
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadGitalyConfig', () => {
  it('applies defaults and reads the token', () => {
    const { file } = base();
    const config = loadGitalyConfig(file, {});
    expect(config).toMatchObject({
      listen: { host: '127.0.0.1', port: 9001 },
      token: 'the-token',
      gitlabUrl: 'http://127.0.0.1:3001',
      uploadPackNegotiationTimeoutMs: 600_000,
      uploadArchiveNegotiationTimeoutMs: 60_000,
      logLevel: 'info',
      runtimeDir: undefined,
      listenTls: undefined,
      listenUnix: undefined,
      legacyUploadPack: false,
      yamuxFlavour: 'hashicorp',
      eagerBackchannel: false,
      sidechannelHandshakeTimeoutMs: 5000,
      sidechannelWrongId: false,
      quarantineSweep: true,
      quarantineSweepIntervalMs: 600_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes the quarantine sweep settings and refuses an interval under 1 s', () => {
    const { file } = base();
    const config = loadGitalyConfig(file, {
      GITALY_QUARANTINE_SWEEP: 'false',
      GITALY_QUARANTINE_SWEEP_INTERVAL_MS: '5000',
    });
    expect(config).toMatchObject({ quarantineSweep: false, quarantineSweepIntervalMs: 5000 });
    expect(configError(() => loadGitalyConfig({ ...file, quarantineSweepIntervalMs: 999 }, {}))).toMatch(
      /quarantineSweepIntervalMs .*must be an integer between 1000 /,
    );
  });

  it('takes GITALY_* overrides, storages as JSON', () => {
    const { file, dir } = base();
    const other = join(dir, 'other');
    mkdirSync(other);
    const config = loadGitalyConfig(file, {
      GITALY_STORAGES: JSON.stringify({ default: other, second: other }),
      GITALY_UPLOAD_PACK_NEGOTIATION_TIMEOUT_MS: '1500',
      GITALY_LISTEN: '[::1]:0',
    });
    expect(config.storages).toEqual({ default: other, second: other });
    expect(config.uploadPackNegotiationTimeoutMs).toBe(1500);
    expect(config.listen).toEqual({ host: '::1', port: 0 });
  });

  it('refuses missing or non-directory storages', () => {
    const { file, dir } = base();
    expect(configError(() => loadGitalyConfig({ ...file, storages: { s: join(dir, 'nope') } }, {}))).toMatch(
      /storage "s": cannot access/,
    );
    expect(configError(() => loadGitalyConfig({ ...file, storages: { s: file.tokenFile } }, {}))).toMatch(
      /is not a directory/,
    );
    expect(configError(() => loadGitalyConfig({ ...file, storages: {} }, {}))).toMatch(
      /at least one storage/,
    );
  });

  it('refuses a token file others can read, and an empty one (auth is always on)', () => {
    const { file, dir } = base();
    chmodSync(file.tokenFile, 0o644);
    expect(configError(() => loadGitalyConfig(file, {}))).toMatch(/chmod 600/);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n', { mode: 0o600 });
    expect(configError(() => loadGitalyConfig({ ...file, tokenFile: empty }, {}))).toMatch(/is empty/);
  });

  it('refuses unknown keys, a missing shell secret and a relative runtimeDir', () => {
    const { file, dir } = base();
    expect(configError(() => loadGitalyConfig({ ...file, storage: {} }, {}))).toMatch(
      /unknown setting "storage"/,
    );
    expect(configError(() => loadGitalyConfig({ ...file, gitlabSecretFile: join(dir, 'x') }, {}))).toMatch(
      /GitLab Shell secret/,
    );
    expect(configError(() => loadGitalyConfig({ ...file, runtimeDir: 'run' }, {}))).toMatch(/absolute path/);
  });

  it('takes the emulation switches from the file and the environment', () => {
    const { file } = base();
    const config = loadGitalyConfig(
      { ...file, legacyUploadPack: true, yamuxFlavour: 'libp2p' },
      {
        GITALY_EAGER_BACKCHANNEL: 'true',
        GITALY_SIDECHANNEL_HANDSHAKE_TIMEOUT_MS: '250',
        GITALY_SIDECHANNEL_WRONG_ID: '1',
      },
    );
    expect(config).toMatchObject({
      legacyUploadPack: true,
      yamuxFlavour: 'libp2p',
      eagerBackchannel: true,
      sidechannelHandshakeTimeoutMs: 250,
      sidechannelWrongId: true,
    });
    expect(configError(() => loadGitalyConfig({ ...file, yamuxFlavour: 'go' }, {}))).toMatch(
      /yamuxFlavour .*one of hashicorp, libp2p/,
    );
    expect(configError(() => loadGitalyConfig(file, { GITALY_LEGACY_UPLOAD_PACK: 'yes' }))).toMatch(
      /GITALY_LEGACY_UPLOAD_PACK.*true or false/,
    );
    expect(configError(() => loadGitalyConfig({ ...file, sidechannelHandshakeTimeoutMs: 0 }, {}))).toMatch(
      /sidechannelHandshakeTimeoutMs/,
    );
  });

  it('needs a readable certificate and key with listenTls, and listenTls with them; unix paths absolute', () => {
    const { file, dir } = base();
    const cert = writeSecret(dir, 'cert.pem', 'x');
    const key = writeSecret(dir, 'key.pem', 'x');
    const tls = { listenTls: '127.0.0.1:0', tlsCertFile: cert, tlsKeyFile: key };
    expect(loadGitalyConfig({ ...file, ...tls }, {}).listenTls).toEqual({ host: '127.0.0.1', port: 0 });
    expect(configError(() => loadGitalyConfig({ ...file, ...tls, tlsKeyFile: undefined }, {}))).toMatch(
      /listenTls needs tlsKeyFile/,
    );
    expect(
      configError(() => loadGitalyConfig({ ...file, ...tls, tlsCertFile: join(dir, 'no') }, {})),
    ).toMatch(/tlsCertFile: cannot read/);
    expect(configError(() => loadGitalyConfig({ ...file, tlsCertFile: cert, tlsKeyFile: key }, {}))).toMatch(
      /need listenTls/,
    );
    expect(configError(() => loadGitalyConfig({ ...file, listenUnix: 'gitaly.sock' }, {}))).toMatch(
      /listenUnix .*absolute path/,
    );
  });
});

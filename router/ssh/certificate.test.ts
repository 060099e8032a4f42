import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateProblem, fingerprint, parseCertificate, verifySshSignature } from './certificate.js';

const run = promisify(execFile);
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-cert-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A CA of `caType` signs a fresh `keyType` user key; returns the certificate blob and the CA's. */
async function issue(name: string, caType: string, keyType: string, extra: string[]) {
  const ca = join(dir, `${name}-ca`);
  const key = join(dir, `${name}-key`);
  await run('ssh-keygen', ['-q', '-t', caType, '-N', '', '-f', ca]);
  await run('ssh-keygen', ['-q', '-t', keyType, '-N', '', '-f', key]);
  await run('ssh-keygen', ['-q', '-s', ca, '-I', 'alice', ...extra, `${key}.pub`]);
  const blob = (file: string) => Buffer.from(readFileSync(file, 'utf8').split(' ')[1] ?? '', 'base64');
  return { cert: blob(`${key}-cert.pub`), ca: blob(`${ca}.pub`), key: blob(`${key}.pub`) };
}

describe('parseCertificate', () => {
  it.each([
    ['ed25519', 'ed25519'],
    ['rsa', 'ecdsa'],
    ['ecdsa', 'rsa'],
  ])('reads a %s-signed %s user certificate and verifies its CA signature', async (caType, keyType) => {
    const {
      cert: blob,
      ca,
      key,
    } = await issue(`${caType}-${keyType}`, caType, keyType, [
      '-n',
      'git,deploy',
      '-V',
      '-5m:+1h',
      '-z',
      '42',
    ]);
    const cert = parseCertificate(blob);
    expect(cert).toMatchObject({ keyId: 'alice', principals: ['git', 'deploy'], serial: 42n, certType: 1 });
    expect(cert.publicKey.equals(key)).toBe(true);
    expect(cert.signatureKey.equals(ca)).toBe(true);
    expect(verifySshSignature(cert.signatureKey, cert.signed, cert.signature)).toBe(true);
    expect(
      verifySshSignature(cert.signatureKey, Buffer.concat([cert.signed, Buffer.from('x')]), cert.signature),
    ).toBe(false);
    expect(certificateProblem(cert, 'git', '127.0.0.1')).toBeUndefined();
    expect(fingerprint(ca)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it('refuses expired, not yet valid, wrong principal, host and source-restricted certificates', async () => {
    const expired = parseCertificate(
      (await issue('old', 'ed25519', 'ed25519', ['-V', '20200101:20200102'])).cert,
    );
    expect(certificateProblem(expired, 'git', '127.0.0.1')).toBe('certificate has expired');
    const future = parseCertificate((await issue('new', 'ed25519', 'ed25519', ['-V', '+1d:+2d'])).cert);
    expect(certificateProblem(future, 'git', '127.0.0.1')).toBe('certificate is not yet valid');
    const other = parseCertificate((await issue('root', 'ed25519', 'ed25519', ['-n', 'root'])).cert);
    expect(certificateProblem(other, 'git', '127.0.0.1')).toBe(
      'certificate is not valid for principal "git"',
    );
    const host = parseCertificate((await issue('host', 'ed25519', 'ed25519', ['-h'])).cert);
    expect(certificateProblem(host, 'git', '127.0.0.1')).toBe('not a user certificate (type 2)');
    const src = parseCertificate(
      (await issue('src', 'ed25519', 'ed25519', ['-O', 'source-address=10.0.0.0/8'])).cert,
    );
    expect(certificateProblem(src, 'git', '10.1.2.3')).toBeUndefined();
    expect(certificateProblem(src, 'git', '127.0.0.1')).toMatch(/source address 127.0.0.1 not allowed/);
  });

  it('refuses blobs that are no certificate', () => {
    expect(() => parseCertificate(Buffer.from('garbage'))).toThrow();
  });
});

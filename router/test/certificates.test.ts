import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, gitViaSsh, remoteUrl, ssh } from '../test-support/clients.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/**
 * SSH user certificates (gitlab-sshd `trusted_user_ca_keys`) with real OpenSSH: a key the cells do
 * not know logs in with a certificate of a trusted CA, whose KeyId names the GitLab user.
 */
const run = promisify(execFile);
let stack: TestStack;
let dir: string;
const ca = () => join(dir, 'ca');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-certs-'));
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'trusted-ca', '-f', ca()]);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'other-ca', '-f', join(dir, 'other-ca')]);
  stack = await startTestStack({ trustedUserCaKeys: [`${ca()}.pub`] });
  await stack.addProject('acme/app', 'cell_eu0', { 'README.md': 'app\n' });
});

afterAll(async () => {
  await stack?.close();
});

/** A fresh key the cells do not know, with `<key>-cert.pub` signed by `signer` (OpenSSH loads both). */
async function certifiedKey(name: string, signer: string, options: string[]): Promise<string> {
  const key = join(dir, name);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', key]);
  await run('ssh-keygen', ['-q', '-s', signer, '-I', 'alice', ...options, `${key}.pub`]);
  return key;
}

describe('certificate login', () => {
  it("logs in as the KeyId's user and clones as that user", async () => {
    const key = await certifiedKey('good', ca(), ['-n', 'git', '-V', '-5m:+1h']);
    const welcome = await collect(ssh(key, stack.sshPort, []));
    expect(welcome.stdout).toBe('Welcome to GitLab, @alice!\n');
    expect(welcome.code).toBe(0);

    const dest = join(mkdtempSync(join(dir, 'work-')), 'app');
    const clone = await collect(
      gitViaSsh(key, stack.sshPort, ['clone', '-q', remoteUrl(stack.sshPort, 'acme/app'), dest]),
    );
    expect(clone.stderr).toBe('');
    expect(clone.code).toBe(0);
    expect(readFileSync(join(dest, 'README.md'), 'utf8')).toBe('app\n');
    const allowed = stack.cell('cell_eu0').seen('/api/v4/internal/allowed').at(-1);
    expect(JSON.parse(allowed?.body.toString() ?? '{}')).toMatchObject({
      username: 'alice',
      project: 'acme/app.git',
    });
    expect(allowed?.body.toString()).not.toContain('key_id');
  });

  it.each([
    ['expired', ca, ['-V', '20200101:20200102']],
    ['not yet valid', ca, ['-V', '+1d:+2d']],
    ['for another principal', ca, ['-n', 'root']],
    ['of an unknown CA', () => join(dir, 'other-ca'), ['-n', 'git']],
  ])('refuses a certificate %s', async (label, signer, options) => {
    const key = await certifiedKey(`bad-${label.replaceAll(' ', '-')}`, signer(), options);
    const failuresBefore = stack.router.metrics.sshAuthFailures;
    const res = await collect(ssh(key, stack.sshPort, []));
    expect(res.code).toBe(255);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/Permission denied \(publickey\)/);
    expect(stack.router.metrics.sshAuthFailures).toBeGreaterThan(failuresBefore);
  });
});

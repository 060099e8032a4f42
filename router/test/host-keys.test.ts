import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, sshOptions } from '../test-support/clients.js';
import { gitEnv } from '../test-support/git-repos.js';
import { startTestStack, type TestStack } from '../test-support/stack.js';

/** Several host keys (gitlab-sshd `host_key_files`): each type negotiated by real OpenSSH. */
let stack: TestStack;
let keysDir: string;
const TYPES = ['rsa', 'ecdsa', 'ed25519'] as const;
const file = (t: string) => join(keysDir, `ssh_host_${t}_key`);

function publicBlob(t: string): string {
  return readFileSync(`${file(t)}.pub`, 'utf8')
    .trim()
    .split(' ')
    .slice(0, 2)
    .join(' ');
}

beforeAll(async () => {
  keysDir = mkdtempSync(join(tmpdir(), 'router-hostkeys-'));
  stack = await startTestStack({ hostKeyFile: undefined, hostKeyFiles: TYPES.map(file) });
});

afterAll(async () => {
  await stack?.close();
  rmSync(keysDir, { recursive: true, force: true });
});

describe('host keys', () => {
  it('generates RSA 3072, ECDSA P-256 and Ed25519 keys on first start and keeps them', async () => {
    expect(publicBlob('rsa')).toMatch(/^ssh-rsa /);
    expect(publicBlob('ecdsa')).toMatch(/^ecdsa-sha2-nistp256 /);
    expect(publicBlob('ed25519')).toMatch(/^ssh-ed25519 /);
    const bits = await collect(spawn('ssh-keygen', ['-l', '-f', `${file('rsa')}.pub`]));
    expect(bits.stdout).toMatch(/^3072 /);
    const before = TYPES.map(publicBlob);
    const again = await startTestStack({ hostKeyFile: undefined, hostKeyFiles: TYPES.map(file) });
    await again.close();
    expect(TYPES.map(publicBlob)).toEqual(before);
  });

  it('offers every key to ssh-keyscan', async () => {
    const res = await collect(
      spawn('ssh-keyscan', ['-p', String(stack.sshPort), '-t', 'rsa,ecdsa,ed25519', '127.0.0.1']),
    );
    const offered = res.stdout
      .split('\n')
      .filter((l) => l.startsWith('['))
      .map((l) => l.split(' ').slice(1, 3).join(' '))
      .sort();
    expect(offered).toEqual(TYPES.map(publicBlob).sort());
  });

  it.each(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'rsa-sha2-512', 'rsa-sha2-256'])(
    'negotiates %s when the client asks for it, and signs with the right key',
    async (algorithm) => {
      const knownHosts = join(keysDir, `known_hosts_${algorithm}`);
      writeFileSync(knownHosts, TYPES.map((t) => `[127.0.0.1]:${stack.sshPort} ${publicBlob(t)}\n`).join(''));
      const args = [
        ...sshOptions(stack.alice.privateKey, stack.sshPort, { knownHosts, verbose: true }),
        '-o',
        `HostKeyAlgorithms=${algorithm}`,
        'git@127.0.0.1',
      ];
      const res = await collect(spawn('ssh', args, { env: gitEnv() }));
      expect(res.stderr).toContain(`kex: host key algorithm: ${algorithm}`);
      expect(res.stdout).toBe('Welcome to GitLab, @alice!\n');
      expect(res.code).toBe(0);
    },
  );
});

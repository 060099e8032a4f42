import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULTS } from './bench-data.js';
import type { GitContender } from './git-workloads.js';
import { renderMarkdown } from './report.js';
import type { BenchResults } from './results.js';
import { AES_GCM, cipherFamily, withCipher } from './ssh-ciphers.js';
import { evaluate } from './targets.js';

const contender = (id: GitContender['id'], env: NodeJS.ProcessEnv): GitContender => ({
  id,
  url: () => 'ssh://x',
  env,
  server: () => ({ cpu: {}, reapers: [] }),
});

describe('withCipher', () => {
  it('adds -c to the ssh command line git uses, and leaves the contender as it was', () => {
    const c = contender('openssh', { GIT_SSH_COMMAND: 'ssh -F /dev/null -i key', HOME: '/h' });
    const gcm = withCipher(c, AES_GCM);
    expect(gcm.env).toEqual({
      GIT_SSH_COMMAND: 'ssh -F /dev/null -i key -c aes128-gcm@openssh.com',
      HOME: '/h',
    });
    expect(gcm.unavailable).toBeUndefined();
    expect(c.env.GIT_SSH_COMMAND).toBe('ssh -F /dev/null -i key');
  });

  it('makes a contender without ssh, or one that could not start, unavailable', () => {
    expect(withCipher(contender('direct', {}), AES_GCM).unavailable).toMatch(/does not use ssh/);
    const down = { ...contender('cells', {}), unavailable: 'the stack is not running' };
    expect(withCipher(down, AES_GCM).unavailable).toBe('the stack is not running');
  });
});

describe('cipherFamily', () => {
  it('names the families the report compares', () => {
    expect(cipherFamily('chacha20-poly1305@openssh.com')).toBe('ChaCha20-Poly1305');
    expect(cipherFamily('aes128-gcm@openssh.com')).toBe('AES-GCM');
    expect(cipherFamily('aes256-gcm@openssh.com')).toBe('AES-GCM');
    expect(cipherFamily('aes128-ctr')).toBe('AES-CTR');
    expect(cipherFamily('3des-cbc')).toBe('3des-cbc');
  });
});

describe('the report with both cipher families', () => {
  // The last full run, with AES-GCM rounds made up from its ChaCha20 ones (OpenSSH the same, cells 10 % slower).
  const r = JSON.parse(readFileSync(join(RESULTS, 'latest.json'), 'utf8')) as BenchResults;
  const large = r.largeClone;
  if (!large?.openssh.ok || !large.cells.ok) throw new Error('latest.json has no large clone');
  const o = large.openssh.value;
  r.largeCloneAesGcm = {
    openssh: { ok: true, value: { ...o, medianMs: 1000 } },
    cells: { ok: true, value: { ...large.cells.value, medianMs: 1100 } },
  };
  r.settings.ssh['openssh-aes-gcm'] = { kex: 'sntrup761x25519-sha512', cipher: AES_GCM };
  r.settings.ssh['cells-aes-gcm'] = { kex: 'curve25519-sha256', cipher: AES_GCM };
  evaluate(r);
  const md = renderMarkdown(r);

  it('names the cipher of the rows without -c from what the client negotiated', () => {
    expect(r.settings.ssh.cells?.cipher).toBe('chacha20-poly1305@openssh.com');
    expect(md).toContain(
      `| Large clone (SSH ChaCha20-Poly1305), wall time (median of ${r.settings.largeCloneRuns}) |`,
    );
    expect(md).toContain('| Large clone: wall time ≤ 1.25× OpenSSH (ChaCha20-Poly1305) |');
  });

  it('shows the AES-GCM rows in the OpenSSH and cells columns with their ratio, and both targets', () => {
    expect(md).toContain(
      `| Large clone (SSH AES-GCM: \`-c aes128-gcm@openssh.com\`), wall time (median of ${r.settings.largeCloneRuns}) |  | 1.00 s | 1.10 s |  |  | 1.10× |  |  |`,
    );
    expect(md).toMatch(
      /\| Large clone \(SSH AES-GCM\), machine CPU per clone \| {2}\| [\d.]+ s \| [\d.]+ s \| {2}\| {2}\| [\d.]+× \|/,
    );
    expect(md).toContain('| Large clone: wall time ≤ 1.25× OpenSSH (AES-GCM) | 1.10× | **met** |');
    expect(md).toContain('| Large clone: machine CPU per clone ≤ 1.30× OpenSSH (AES-GCM) |');
    expect(md).toContain(
      'with `-c aes128-gcm@openssh.com` (the AES-GCM rows): OpenSSH sntrup761x25519-sha512 / aes128-gcm@openssh.com',
    );
    expect(md).toMatch(/\*\*Server CPU by process, large clone\*\* \(SSH ChaCha20-Poly1305; mean of/);
    expect(md).toMatch(
      /With AES-GCM \(`-c aes128-gcm@openssh.com`\), CPU per GiB served: router [\d.]+ s, bridge [\d.]+ s, the OpenSSH server’s own processes [\d.]+ s; router \/ OpenSSH server [\d.]+×\./,
    );
  });
});

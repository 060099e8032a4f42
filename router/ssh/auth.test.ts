import { describe, expect, it } from 'vitest';
import { sameKeyBlob } from './auth.js';

const BLOB = 'AAAAC3NzaC1lZDI1NTE5AAAAIEk0a4YOa3OX3EY1q0p9sRbm1wL4Kc2x0I6c8bH7l3X9';

describe('sameKeyBlob', () => {
  it('matches the blob of a full key line or a bare blob', () => {
    expect(sameKeyBlob(`ssh-ed25519 ${BLOB} alice@laptop`, BLOB)).toBe(true);
    expect(sameKeyBlob(`ssh-ed25519 ${BLOB}`, BLOB)).toBe(true);
    expect(sameKeyBlob(`  ${BLOB}\n`, BLOB)).toBe(true);
  });

  it('refuses another key, a prefix of it, or an empty record', () => {
    expect(sameKeyBlob(`ssh-ed25519 ${BLOB.replace('X9', 'X8')}`, BLOB)).toBe(false);
    expect(sameKeyBlob(`ssh-ed25519 ${BLOB.slice(0, -4)}`, BLOB)).toBe(false);
    expect(sameKeyBlob('', BLOB)).toBe(false);
  });
});

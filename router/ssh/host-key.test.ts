import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateHostKey } from './host-key.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-hostkey-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('loadOrCreateHostKey', () => {
  it('generates an ed25519 key once (mode 600) and reuses it afterwards', async () => {
    const file = join(dir, 'nested', 'ssh_host_ed25519_key');
    const first = await loadOrCreateHostKey(file);
    expect(first.created).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const parsed = ssh2.utils.parseKey(first.key);
    expect(parsed instanceof Error ? parsed.message : parsed.type).toBe('ssh-ed25519');

    const second = await loadOrCreateHostKey(file);
    expect(second.created).toBe(false);
    expect(second.key.equals(first.key)).toBe(true);
  });
});

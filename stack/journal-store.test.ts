import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalDraft } from '../lib/contracts/world.js';
import { JournalStore } from './journal-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function store(tail?: number): JournalStore {
  const dir = mkdtempSync(join(tmpdir(), 'journal-store-'));
  dirs.push(dir);
  return new JournalStore(join(dir, 'journal.ndjson'), tail);
}

const draft = (cell: string | null, service: JournalDraft['service'], endpoint: string): JournalDraft => ({
  time: new Date().toISOString(),
  cell,
  service,
  endpoint,
  status: 200,
  durationMs: 0,
  bytesIn: 0,
  bytesOut: 0,
});

describe('JournalStore', () => {
  it('numbers entries from 1, filters them and writes every one to the file', async () => {
    const s = store();
    s.append(draft('cell_a', 'rails', '/api/v4/internal/allowed'));
    s.append(draft('cell_b', 'bridge', '/g/p.git/ssh-upload-pack'));
    s.append(draft(null, 'topology-service', '/gitlab.cells.topology_service.ClassifyService/Classify'));
    expect(s.query({ cell: 'cell_b' }).map((e) => e.seq)).toEqual([2]);
    expect(s.query({ service: 'rails' }).map((e) => e.seq)).toEqual([1]);
    expect(s.query({ since: 1, endpoint: 'Classify' }).map((e) => e.seq)).toEqual([3]);
    expect(s.query({ cell: null }).map((e) => e.seq)).toEqual([3]);
    await s.close();
    const lines = readFileSync(s.file, 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2, 3]);
  });

  it('keeps only the last tailSize entries in memory; the file keeps them all', async () => {
    const s = store(2);
    for (let i = 0; i < 5; i++) s.append(draft('c', 'rails', `/e${i}`));
    expect(s.query({}).map((e) => e.seq)).toEqual([4, 5]);
    expect(s.lastSeq).toBe(5);
    await s.close();
    expect(readFileSync(s.file, 'utf8').trim().split('\n')).toHaveLength(5);
  });

  it('long-polls for a matching entry and gives up after waitMs', async () => {
    const s = store();
    const waiting = s.poll({ service: 'gitaly' }, 5_000);
    s.append(draft('c', 'rails', '/not-this'));
    setTimeout(() => s.append(draft('c', 'gitaly', '/gitaly.SSHService/SSHUploadPackWithSidechannel')), 50);
    expect((await waiting).map((e) => e.service)).toEqual(['gitaly']);
    expect(await s.poll({ service: 'bridge' }, 50)).toEqual([]);
    const abort = new AbortController();
    const aborted = s.poll({ service: 'bridge' }, 60_000, abort.signal);
    abort.abort();
    expect(await aborted).toEqual([]);
    await s.close();
  });
});

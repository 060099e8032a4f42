import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WORKHORSE_CONTENT_TYPE } from '../../lib/contracts/workhorse.js';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import {
  GIT_ENV,
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
} from '../test-support/harness.js';

/**
 * `NeedAudit` → Workhorse's `git_audit_event`: the real mock cell (GitLab CE: `NeedAudit: false`)
 * behind a thin front that turns its yes into `NeedAudit: true` (as EE with audit event streaming
 * would) and records the audit calls it forwards to the cell, whose answer is checked too. The front
 * also adds a linked scoped user and a CI job id to the yes, which a push hands to Gitaly as
 * Workhorse's client context.
 */

interface AuditCall {
  body: Record<string, unknown>;
  jwt: string | undefined;
  cellStatus: number;
}

let programs: CompiledPrograms;
let h: Harness;
let b: RunningBridge;
let front: http.Server;
const audits: AuditCall[] = [];
const rpcs: JournalDraft[] = [];
const EE_FIELDS = { NeedAudit: true, GlScopedUserID: '77', GlBuildID: '4242' };

function startFront(cellUrl: string): Promise<string> {
  front = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    const method = req.method ?? 'GET';
    const upstream = await fetch(`${cellUrl}${req.url}`, {
      method,
      headers,
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      redirect: 'manual',
    });
    let body = Buffer.from(await upstream.arrayBuffer());
    const type = upstream.headers.get('content-type') ?? '';
    if (req.url?.endsWith('/shellhorse/git_audit_event')) {
      audits.push({
        body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
        jwt: req.headers['gitlab-workhorse-api-request'] as string | undefined,
        cellStatus: upstream.status,
      });
    }
    if (type.startsWith(WORKHORSE_CONTENT_TYPE))
      body = Buffer.from(JSON.stringify({ ...JSON.parse(body.toString()), ...EE_FIELDS }));
    const out: Record<string, string> = { 'content-type': type };
    const challenge = upstream.headers.get('www-authenticate');
    if (challenge) out['www-authenticate'] = challenge;
    res.writeHead(upstream.status, out).end(body);
  });
  return new Promise((resolve) =>
    front.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(front.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  programs = await compilePrograms(['mock-gitaly/hook-main.ts']);
  h = await startHarness({
    hookProgram: programs.path('mock-gitaly/hook-main.ts'),
    gitalyJournal: (d) => rpcs.push(d),
  });
  h.createRepo(PROJECT, { 'README.md': '# audited\n' });
  b = await h.startBridge({ railsUrl: await startFront(h.cell.url) });
}, 60_000);
afterAll(async () => {
  await h?.close();
  programs?.cleanup();
  front?.closeAllConnections();
  await new Promise((r) => front?.close(r));
});

function runGit(args: string[], cwd = h.dir): Promise<number | null> {
  const child = spawn('git', args, {
    cwd,
    env: { ...GIT_ENV, GIT_TERMINAL_PROMPT: '0' },
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.on('close', resolve));
}

describe('NeedAudit → git_audit_event', () => {
  it('a clone is followed by one audit event per upload-pack, with Workhorse’s JWT, accepted by the cell', async () => {
    const dest = join(mkdtempSync(join(h.dir, 'audit-')), 'repo');
    const url = `http://alice:alice-password@${new URL(b.url).host}/${PROJECT}.git`;
    expect(await runGit(['clone', url, dest])).toBe(0);
    expect(git(['rev-parse', 'HEAD'], dest).trim()).toMatch(/^[0-9a-f]{40}$/);
    expect(audits.length).toBeGreaterThanOrEqual(1);
    for (const a of audits) {
      expect(a.body).toMatchObject({
        action: 'git-upload-pack',
        protocol: 'http',
        gl_repository: expect.stringMatching(/^project-\d+$/),
        username: 'alice',
        changes: '_any',
      });
      expect(a.jwt).toBeDefined();
      expect(a.cellStatus).toBe(200);
    }
    // Gitaly's negotiation count, as Workhorse's Go JSON writes it (numbers, zero fields left out):
    // a fresh clone wants the branches' commits and has nothing; protocol v2 sends no caps line.
    const stats = audits.map((a) => a.body.packfile_stats as Record<string, unknown> | undefined);
    const fetch = stats.find((s) => Number(s?.wants) > 0);
    expect(fetch).toEqual({
      payload_size: expect.any(Number),
      packets: expect.any(Number),
      wants: expect.any(Number),
    });
    expect(Number(fetch?.payload_size)).toBeGreaterThan(0);
  }, 60_000);

  it('a push is followed by one receive-pack audit event; Gitaly gets the client context', async () => {
    const dest = join(mkdtempSync(join(h.dir, 'audit-push-')), 'repo');
    const url = `http://alice:alice-password@${new URL(b.url).host}/${PROJECT}.git`;
    expect(await runGit(['clone', url, dest])).toBe(0);
    git(['commit', '-q', '--allow-empty', '-m', 'audited push'], dest);
    audits.length = 0;
    rpcs.length = 0;
    expect(await runGit(['push', 'origin', 'HEAD:refs/heads/audited'], dest)).toBe(0);
    // The bridge posts the audit after the answer has ended: git may exit first.
    await vi.waitFor(() => expect(audits.length).toBeGreaterThan(0), { timeout: 5000 });
    expect(audits.map((a) => [a.body.action, a.body.protocol, a.body.username, a.cellStatus])).toEqual([
      ['git-receive-pack', 'http', 'alice', 200],
    ]);
    // Gitaly returns no statistics for a push.
    expect(audits[0]?.body).not.toHaveProperty('packfile_stats');
    const pushes = rpcs.filter((r) => r.endpoint.endsWith('/PostReceivePack'));
    expect(pushes.map((r) => [r.status, r.headers?.['gitaly-client-context-bin']])).toEqual([
      ['OK', '{"glBuildId":"4242","scoped-user-id":"77"}'],
    ]);
  }, 60_000);
});

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECEIVE_PACK_BUSY, UPLOAD_PACK_BUSY } from '../git-http/busy.js';
import {
  GIT_ENV,
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
} from '../test-support/harness.js';

/**
 * Gitaly over its limit (the mock Gitaly's `limit-error` fault: `Unavailable` with a
 * `gitaly.LimitError` detail) → Workhorse's busy answers, byte for byte, and what git shows.
 */

let h: Harness;
let b: RunningBridge;
let bare = '';
beforeAll(async () => {
  h = await startHarness();
  bare = h.createRepo(PROJECT, { 'README.md': '# busy\n' });
  b = await h.startBridge();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const AUTH = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
const url = () => `http://alice:alice-password@${new URL(b.url).host}/${PROJECT}.git`;
const overload = (rpc: string) => h.gitaly.server.world.faults.add({ kind: 'limit-error', rpc, times: 1 });

function runGit(args: string[], cwd = h.dir): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('git', args, {
    cwd,
    env: { ...GIT_ENV, GIT_TERMINAL_PROMPT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

async function post(service: 'upload-pack' | 'receive-pack', body: string) {
  const res = await fetch(`${b.url}/${PROJECT}.git/git-${service}`, {
    method: 'POST',
    headers: { 'content-type': `application/x-git-${service}-request`, authorization: AUTH },
    body,
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

describe('Gitaly’s LimitError → Workhorse’s busy answers', () => {
  it('upload-pack: 200 with the ERR pkt-line, byte for byte', async () => {
    overload('PostUploadPackWithSidechannel');
    const res = await post('upload-pack', '0000');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/x-git-upload-pack-result');
    expect(res.body.toString('latin1')).toBe(
      '0047ERR GitLab is currently unable to handle this request due to load.\n',
    );
    expect(res.body.equals(UPLOAD_PACK_BUSY)).toBe(true);
  });

  it('receive-pack: 200 with the busy report-status on band 1 and the message on band 2', async () => {
    overload('PostReceivePack');
    const res = await post('receive-pack', '0000');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/x-git-receive-pack-result');
    expect(res.body.toString('latin1')).toBe(
      '0023\x01001aunpack server is busy\n00000044\x02GitLab is currently unable to handle this request due to load.\n0000',
    );
    expect(res.body.equals(RECEIVE_PACK_BUSY)).toBe(true);
  });

  it('real git shows the message on clone and on push; refs unchanged', async () => {
    overload('PostUploadPackWithSidechannel');
    const clone = await runGit(['clone', url(), join(mkdtempSync(join(h.dir, 'busy-')), 'repo')]);
    expect(clone.code).not.toBe(0);
    expect(clone.stderr).toContain(
      'remote error: GitLab is currently unable to handle this request due to load.',
    );
    const dest = join(mkdtempSync(join(h.dir, 'push-')), 'repo');
    expect((await runGit(['clone', url(), dest])).code).toBe(0);
    git(['commit', '-q', '--allow-empty', '-m', 'busy'], dest);
    const refs = git(['--git-dir', bare, 'for-each-ref']);
    overload('PostReceivePack');
    const push = await runGit(['push', 'origin', 'HEAD:refs/heads/busy'], dest);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain('remote: GitLab is currently unable to handle this request due to load.');
    expect(push.stderr).toMatch(/unpack failed: server is busy/);
    expect(git(['--git-dir', bare, 'for-each-ref'])).toBe(refs);
  }, 60_000);

  it('RESOURCE_EXHAUSTED with the detail, as Gitaly’s limiter answers, is the same busy answer', async () => {
    h.gitaly.server.world.faults.add({
      kind: 'resource-exhausted',
      rpc: 'PostUploadPackWithSidechannel',
      limit: 'queue-size',
      times: 1,
    });
    const res = await post('upload-pack', '0000');
    expect(res.status).toBe(200);
    expect(res.body.equals(UPLOAD_PACK_BUSY)).toBe(true);
  });

  it.each(['upload-pack', 'receive-pack'] as const)(
    '%s: the same Unavailable without the detail is Workhorse’s empty 500',
    async (service) => {
      const rpc = service === 'upload-pack' ? 'PostUploadPackWithSidechannel' : 'PostReceivePack';
      h.gitaly.server.world.faults.add({ kind: 'unavailable', rpc, times: 1 });
      const res = await post(service, '0000');
      expect(res.status).toBe(500);
      expect(res.body.length).toBe(0);
    },
  );
});

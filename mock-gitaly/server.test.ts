import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { decodeAll, encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { waitUntil } from '../test/helpers/poll.js';
import { buildGitalyServer } from './server.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  gitChildren,
  RawCall,
  type StartedGitaly,
  startGitaly,
  stubHookProgram,
  tempDir,
} from './test-support/harness.js';

const REPO = '@hashed/6b/86/6b86b273ff34fce19e6b804eff5a3f5747ada4ea2d0ed1085b6a3b9d6d3e5a0b.git';
const repository = { storage_name: 'default', relative_path: REPO, gl_repository: 'project-1' };

let g: StartedGitaly;
let commit: string;

/** These tests drive the bidi SSHUploadPack, which Gitaly ≥ 17.8 (and mock Gitaly by default) refuses. */
async function start(settings: Record<string, unknown> = {}) {
  g = await startGitaly({ legacyUploadPack: true, ...settings }, { hookProgram: stubHookProgram() });
  commit = await createRepo(g.storage, REPO, { 'README.md': '# hello\n', 'src/a.txt': 'a\n' });
}

afterEach(cleanup);

function uploadPack(metadata = authMetadata(g.token)) {
  return new RawCall(g.client, 'SSHUploadPack', metadata);
}

describe('authentication', () => {
  beforeEach(() => start());

  it('answers UNAUTHENTICATED without a token', async () => {
    const call = uploadPack(new grpc.Metadata());
    call.send({ repository });
    const { status } = await call.done;
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.details).toBe('authentication required');
  });

  it('answers PERMISSION_DENIED for a token signed with another secret', async () => {
    const call = uploadPack(authMetadata('not-the-token'));
    call.send({ repository });
    const { status } = await call.done;
    expect(status.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(status.details).toBe('permission denied');
  });

  it('answers PERMISSION_DENIED for an expired token', async () => {
    const call = uploadPack(authMetadata(g.token, Math.floor(Date.now() / 1000) - 120));
    call.send({ repository });
    const { status } = await call.done;
    expect(status.code).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('checks auth on the sidechannel RPC too; on a plain connection it cannot open the sidechannel', async () => {
    const client = g.client as unknown as Record<
      string,
      (req: unknown, md: grpc.Metadata, cb: (err: grpc.ServiceError | null) => void) => void
    >;
    const call = (md: grpc.Metadata) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        client.SSHUploadPackWithSidechannel!.call(g.client, { repository }, md, resolve),
      );
    expect((await call(new grpc.Metadata()))?.code).toBe(grpc.status.UNAUTHENTICATED);
    const md = authMetadata(g.token);
    md.set('gitaly-sidechannel-id', '1');
    const err = await call(md);
    expect(err?.code).toBe(grpc.status.INTERNAL);
    expect(err?.details).toBe(
      'opennig sidechannel: sidechannel: fail to extract mux session: non-multiplexed connection',
    );
  });
});

describe('authentication before the concurrency limiter (Gitaly: auth interceptor, then limit handler)', () => {
  const oneAtATime = {
    concurrency: [
      { rpc: '/gitaly.SSHService/SSHUploadPack', maxPerRepo: 1, maxQueueSize: 5, maxQueueWaitMs: 0 },
    ],
  };

  it('refuses a bad token at once while the slot is busy; a good one is not refused for the time it queued', async () => {
    await start(oneAtATime);
    const holder = uploadPack();
    holder.send({ repository });
    await holder.waitForStdout((out) => out.toString().endsWith('0000'));
    // Behind the holder in the queue, a bad token would wait for the slot: refused at once instead.
    const bad = uploadPack(authMetadata('not-the-token'));
    bad.send({ repository });
    expect((await bad.done).status.code).toBe(grpc.status.PERMISSION_DENIED);
    // Signed 28 s ago, then 3 s in the queue: past Gitaly's 30 s when the slot frees.
    const queued = uploadPack(authMetadata(g.token, Math.floor(Date.now() / 1000) - 28));
    queued.send({ repository });
    await new Promise((r) => setTimeout(r, 3000));
    expect(queued.responses).toEqual([]);
    holder.send({ stdin: FLUSH_PKT });
    holder.call.end();
    expect((await holder.done).status.code).toBe(grpc.status.OK);
    await queued.waitForStdout((out) => out.toString().endsWith('0000'));
    queued.send({ stdin: FLUSH_PKT });
    queued.call.end();
    expect((await queued.done).status.code).toBe(grpc.status.OK);
  });
});

describe('request validation', () => {
  beforeEach(() => start());

  async function firstMessageStatus(rpc: string, first: Record<string, unknown>) {
    const call = new RawCall(g.client, rpc, authMetadata(g.token));
    call.send(first);
    return (await call.done).status;
  }

  it('rejects an unknown storage', async () => {
    const status = await firstMessageStatus('SSHUploadPack', {
      repository: { ...repository, storage_name: 'nope' },
    });
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toBe('GetStorageByName: no such storage: "nope"');
  });

  it.each(['../outside.git', '@hashed/../../etc', '/etc/passwd'])(
    'rejects the path %s',
    async (relative_path) => {
      const status = await firstMessageStatus('SSHUploadPack', {
        repository: { ...repository, relative_path },
      });
      expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    },
  );

  it('answers NOT_FOUND for a path that is not a repository', async () => {
    const status = await firstMessageStatus('SSHUploadArchive', {
      repository: { ...repository, relative_path: 'missing/repo.git' },
    });
    expect(status.code).toBe(grpc.status.NOT_FOUND);
    expect(status.details).toBe('GetRepoPath: not a git repository: "missing/repo.git"');
  });

  it('rejects stdin in the first message', async () => {
    const status = await firstMessageStatus('SSHUploadPack', { repository, stdin: FLUSH_PKT });
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toBe('non-empty stdin in first request');
  });

  it('rejects a receive-pack without gl_id', async () => {
    const status = await firstMessageStatus('SSHReceivePack', { repository });
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toBe('empty GlId');
  });

  it('rejects a config option without "="', async () => {
    const status = await firstMessageStatus('SSHUploadPack', { repository, git_config_options: ['novalue'] });
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toMatch(/cannot convert invalid config key/);
  });

  it('refuses config keys that would bypass the hooks', async () => {
    const status = await firstMessageStatus('SSHReceivePack', {
      repository,
      gl_id: 'user-1',
      git_config_options: ['core.hooksPath=/tmp'],
    });
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

describe('SSHUploadPack', () => {
  it('speaks protocol v2: capabilities, ls-refs, then ends at EOF without exit status', async () => {
    await start();
    const call = uploadPack();
    call.send({ repository, git_protocol: 'version=2' });
    const adv = await call.waitForStdout((out) => out.toString().endsWith('0000'));
    const caps = decodeAll(adv);
    expect(caps[0]).toEqual({ kind: 'data', payload: Buffer.from('version 2\n') });
    expect(adv.toString()).toContain('ls-refs');

    call.send({ stdin: Buffer.concat([encodePkt('command=ls-refs\n'), FLUSH_PKT]) });
    const out = await call.waitForStdout((o) => o.length > adv.length && o.toString().endsWith('0000'));
    expect(out.subarray(adv.length).toString()).toContain(`${commit} refs/heads/main`);

    call.send({ stdin: FLUSH_PKT });
    call.call.end();
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.OK);
    expect(done.responses.some((r) => r.exit_status)).toBe(false);
  });

  it('advertises refs in protocol v0 when git_protocol is anything else', async () => {
    await start();
    const call = uploadPack();
    call.send({ repository, git_protocol: 'version=3' });
    const adv = await call.waitForStdout((out) => out.toString().endsWith('0000'));
    const text = adv.toString();
    expect(text).not.toContain('version 2');
    expect(text).toContain(`${commit} HEAD`);
    expect(text).toContain(`${commit} refs/heads/main`);
    expect(text).toContain('allow-reachable-sha1-in-want');
    expect(text).toContain('filter');
    call.send({ stdin: FLUSH_PKT });
    call.call.end();
    expect((await call.done).status.code).toBe(grpc.status.OK);
  });

  it('answers CANCELLED with the exit status when the client hangs up mid-request', async () => {
    await start();
    const call = uploadPack();
    call.send({ repository, git_protocol: 'version=2' });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    call.send({ stdin: encodePkt('command=fetch\n') });
    call.call.end();
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.CANCELLED);
    expect(done.status.details).toBe('user canceled the request');
    expect(done.responses.at(-1)?.exit_status?.value).toBe(128);
  });

  it('answers INTERNAL with git stderr for other failures', async () => {
    await start();
    const call = uploadPack();
    call.send({ repository });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    call.send({ stdin: Buffer.from('zzzz garbage') });
    call.call.end();
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.INTERNAL);
    expect(done.status.details).toMatch(
      /^running upload-pack: exit status 128, stderr: "fatal: protocol error/,
    );
    expect(done.responses.at(-1)?.exit_status?.value).toBe(128);
  });

  it('kills git and answers DEADLINE_EXCEEDED when negotiation does not finish in time', async () => {
    await start({ uploadPackNegotiationTimeoutMs: 1000 });
    const call = uploadPack();
    call.send({ repository });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    call.send({ stdin: Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT]) });
    const started = Date.now();
    const done = await call.done;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(done.status.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(done.status.details).toBe('waiting for negotiation');
    expect(done.responses.some((r) => r.exit_status)).toBe(true);
  });

  it('does not time out a negotiation that sent done', async () => {
    await start({ uploadPackNegotiationTimeoutMs: 1000 });
    const call = uploadPack();
    call.send({ repository });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    call.send({ stdin: Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT, encodePkt('done\n')]) });
    // Keep stdin open past the deadline: the pack is served and the call ends when git exits.
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.OK);
    expect(done.stdout.toString('latin1')).toContain('PACK');
  });

  it('kills git when the client cancels the call', async () => {
    await start();
    const call = uploadPack();
    call.send({ repository });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    expect(gitChildren().length).toBeGreaterThan(0);
    call.call.cancel();
    await waitUntil(() => gitChildren().length === 0, 2000, 'no git child left', 100);
    expect(gitChildren()).toEqual([]);
  });
});

describe('start', () => {
  it('fails without leaving its temporary runtime folder behind', async () => {
    const config = (await startGitaly({}, { hookProgram: stubHookProgram() })).config;
    const tmp = tempDir();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp; // os.tmpdir() follows it
    try {
      const gitaly = buildGitalyServer(config, createLogger('test', 'silent'), {
        hookProgram: '/nonexistent/hook-main.js',
      });
      await expect(gitaly.start()).rejects.toThrow(/does not exist/);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('writes the hooks into a configured runtimeDir and keeps it at stop', async () => {
    const runtimeDir = join(tempDir(), 'run');
    await start({ runtimeDir });
    expect(readdirSync(join(runtimeDir, 'hooks')).sort()).toEqual(['post-receive', 'pre-receive']);
    await g.gitaly.stop(100);
    expect(readdirSync(runtimeDir)).toEqual(['hooks']);
  });
});

describe('stop', () => {
  it('gives running calls the grace period, then kills their git and ends them', async () => {
    await start();
    const call = uploadPack();
    call.send({ repository });
    await call.waitForStdout((out) => out.toString().endsWith('0000'));
    const started = Date.now();
    await g.gitaly.stop(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const done = await call.done;
    expect(done.status.code).not.toBe(grpc.status.OK);
    expect(gitChildren()).toEqual([]);
  });
});

describe('SSHUploadArchive', () => {
  it('streams an archive and reports exit status 0 explicitly', async () => {
    await start();
    const call = new RawCall(g.client, 'SSHUploadArchive', authMetadata(g.token));
    call.send({ repository });
    call.send({
      stdin: Buffer.concat([encodePkt('argument --format=tar\n'), encodePkt('argument HEAD\n'), FLUSH_PKT]),
    });
    call.call.end();
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.OK);
    expect(done.stdout.subarray(0, 12).toString()).toBe('0008ACK\n0000');
    expect(done.stdout.toString('latin1')).toContain('src/a.txt');
    expect(done.responses.at(-1)?.exit_status?.value).toBe(0);
  });

  it('answers DEADLINE_EXCEEDED when the arguments never end', async () => {
    await start({ uploadArchiveNegotiationTimeoutMs: 1000 });
    const call = new RawCall(g.client, 'SSHUploadArchive', authMetadata(g.token));
    call.send({ repository });
    call.send({ stdin: encodePkt('argument HEAD\n') });
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it('fails with the exit status and INTERNAL for a bad tree-ish', async () => {
    await start();
    const call = new RawCall(g.client, 'SSHUploadArchive', authMetadata(g.token));
    call.send({ repository });
    call.send({ stdin: Buffer.concat([encodePkt('argument no-such-ref\n'), FLUSH_PKT]) });
    call.call.end();
    const done = await call.done;
    expect(done.status.code).toBe(grpc.status.INTERNAL);
    const exit = done.responses.find((r) => r.exit_status)?.exit_status?.value;
    expect(exit).toBeGreaterThan(0);
  });
});

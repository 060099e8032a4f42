import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { BackchannelCredentials, parseGitalyAddress, SidechannelRegistry } from '../lib/gitaly/index.js';
import { infoRefs, postReceivePack, postUploadPack, type SmartHttpTarget } from '../lib/gitaly/smarthttp.js';
import { loadSmartHttpService } from '../lib/proto-smarthttp.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  git,
  onCleanup,
  run,
  type StartedGitaly,
  startGitaly,
  tempDir,
  waitForNoGit,
} from './test-support/harness.js';

/**
 * `gitaly.SmartHTTPService` of mock Gitaly with a real grpc client (lib/gitaly/smarthttp.ts over a
 * backchannel) and real git: a minimal Workhorse-shaped HTTP server in the test maps git's smart
 * HTTP onto the four RPCs, so `git clone/fetch/push http://…` exercises them end to end.
 */

const REPO = 'group/project.git';
let g: StartedGitaly;
let hookOut = '';

afterEach(async () => {
  await cleanup();
  expect(await waitForNoGit(2000)).toEqual([]);
});

function target(): SmartHttpTarget {
  const registry = new SidechannelRegistry();
  const t = parseGitalyAddress(`tcp://${g.address}`);
  const credentials = new BackchannelCredentials({ target: t, registry, yamuxWindow: 256 * 1024 });
  const Client = loadSmartHttpService();
  const client = new Client(t.target, credentials);
  onCleanup(() => client.close());
  return { client, registry };
}

/** Workhorse's three git routes, without pre-authorization: enough to drive the RPCs with git. */
function miniWorkhorse(smart: SmartHttpTarget): Promise<string> {
  const repository = { storage_name: 'default', relative_path: REPO, gl_repository: 'project-1' };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const base = {
      repository,
      git_config_options: [],
      git_protocol: String(req.headers['git-protocol'] ?? ''),
    };
    const md = authMetadata(g.token);
    const body = req.headers['content-encoding'] === 'gzip' ? req.pipe(createGunzip()) : req;
    if (url.pathname.endsWith('/info/refs')) {
      const service = url.searchParams.get('service') === 'git-receive-pack' ? 'receive-pack' : 'upload-pack';
      res.writeHead(200, { 'content-type': `application/x-git-${service}-advertisement` });
      const call = infoRefs(smart, service, base, md);
      call.on('data', (m: { data?: Buffer }) => m.data && res.write(m.data));
      call.on('error', () => res.destroy());
      call.on('end', () => res.end());
    } else if (url.pathname.endsWith('/git-upload-pack')) {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' });
      void postUploadPack(smart, base, md, { body, output: res }).done.then(({ error }) =>
        error ? res.destroy() : res.end(),
      );
    } else {
      res.writeHead(200, { 'content-type': 'application/x-git-receive-pack-result' });
      const call = postReceivePack(
        smart,
        { ...base, gl_id: 'user-1', gl_username: 'alice', gl_repository: 'project-1' },
        md,
        { buildId: '', scopedUserId: '' },
      );
      body.on('data', (data: Buffer) => call.write({ data }));
      body.on('end', () => call.end());
      call.on('data', (m: { data?: Buffer }) => m.data && res.write(m.data));
      call.on('error', () => res.destroy());
      call.on('end', () => res.end());
    }
  });
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${REPO}`),
    ),
  );
}

async function start(): Promise<string> {
  const dir = tempDir();
  hookOut = join(dir, 'hook-payload.json');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(hookOut)}, Buffer.from(process.env.GITALY_HOOKS_PAYLOAD, 'base64').toString() + '\\n');\n`,
  );
  g = await startGitaly({}, { hookProgram: hook });
  await createRepo(g.storage, REPO, { 'README.md': '# http\n', 'a.txt': 'a\n' });
  return miniWorkhorse(target());
}

describe('mock Gitaly SmartHTTPService with real git', () => {
  it.each(['0', '2'])('clones, fetches shallow and pushes with protocol v%s', async (version) => {
    const url = await start();
    const dest = join(tempDir(), 'clone');
    const clone = await run('git', ['-c', `protocol.version=${version}`, 'clone', url, dest]);
    expect(clone.stderr).not.toMatch(/fatal/);
    expect(clone.code).toBe(0);
    expect(readFileSync(join(dest, 'a.txt'), 'utf8')).toBe('a\n');

    const shallow = join(tempDir(), 'shallow');
    const res = await run('git', ['-c', `protocol.version=${version}`, 'clone', '--depth=1', url, shallow]);
    expect(res.code).toBe(0);

    writeFileSync(join(dest, 'b.txt'), 'b\n');
    await git(['add', '.'], { cwd: dest });
    await git(['commit', '-m', 'b'], { cwd: dest });
    const push = await run(
      'git',
      ['-c', `protocol.version=${version}`, 'push', 'origin', 'HEAD:refs/heads/x'],
      {
        cwd: dest,
      },
    );
    expect(push.code).toBe(0);
    expect(await git(['rev-parse', 'x'], { cwd: join(g.storage, REPO) })).toBe(
      await git(['rev-parse', 'HEAD'], { cwd: dest }),
    );
    const payloads = readFileSync(hookOut, 'utf8').trim().split('\n');
    expect(payloads.length).toBeGreaterThan(0);
    for (const line of payloads)
      expect(JSON.parse(line)).toMatchObject({ protocol: 'http', gl_id: 'user-1' });
  });

  it('InfoRefsUploadPack starts with the # service= pkt and a flush', async () => {
    await start();
    const call = infoRefs(
      target(),
      'upload-pack',
      {
        repository: { storage_name: 'default', relative_path: REPO },
        git_config_options: [],
        git_protocol: '',
      },
      authMetadata(g.token),
    );
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      call.on('data', (m: { data?: Buffer }) => m.data && chunks.push(m.data));
      call.on('end', () => resolve());
      call.on('error', reject);
    });
    const text = Buffer.concat(chunks).toString('latin1');
    expect(text.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
    expect(text).toContain('refs/heads/main');
  });

  it('rejects an unknown repository with NOT_FOUND and a receive-pack without gl_id', async () => {
    await start();
    const call = infoRefs(
      target(),
      'receive-pack',
      {
        repository: { storage_name: 'default', relative_path: 'nope.git' },
        git_config_options: [],
        git_protocol: '',
      },
      authMetadata(g.token),
    );
    const code = await new Promise<number>((resolve) => {
      call.on('data', () => {});
      call.on('error', (e: { code: number }) => resolve(e.code));
      call.on('end', () => resolve(0));
    });
    expect(code).toBe(5);
    const push = postReceivePack(
      target(),
      {
        repository: { storage_name: 'default', relative_path: REPO },
        git_config_options: [],
        git_protocol: '',
        gl_id: '',
        gl_username: '',
        gl_repository: '',
      },
      authMetadata(g.token),
      { buildId: '', scopedUserId: '' },
    );
    const err = await new Promise<{ code: number; details: string }>((resolve) => {
      push.on('data', () => {});
      push.on('error', (e: { code: number; details: string }) => resolve(e));
    });
    expect(err).toMatchObject({ code: 3, details: 'empty GlId' });
  });
});

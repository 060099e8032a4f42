import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, createRepo, startGitaly, stubHookProgram } from '../mock-gitaly/test-support/harness.js';
import { GitalyDirect } from './gitaly-direct.js';

afterEach(cleanup);

async function gitalyWithRepo(settings: Record<string, unknown>) {
  const started = await startGitaly(settings, { hookProgram: stubHookProgram() });
  const head = await createRepo(started.storage, 'group/project.git', { 'a.bin': randomBytes(300_000) });
  const direct = (mode: 'sidechannel' | 'stream') => {
    return new GitalyDirect(
      {
        address: `tcp://${started.address}`,
        token: started.token,
        storage: 'default',
        repository: () => ({ relativePath: 'group/project.git', glRepository: 'project-1' }),
      },
      mode,
    );
  };
  return { head, direct };
}

describe('GitalyDirect', () => {
  it('fetches the same response over the sidechannel and the bidi stream', async () => {
    const { head, direct } = await gitalyWithRepo({ legacyUploadPack: true });
    const sizes: number[] = [];
    for (const mode of ['sidechannel', 'stream'] as const) {
      const d = direct(mode);
      try {
        const r = await d.uploadPack('group/project', [head], 30_000);
        expect(r.ms).toBeGreaterThan(0);
        sizes.push(r.stdoutBytes);
      } finally {
        d.close();
      }
    }
    // The same pack; upload-pack's side-band packets (5 bytes of header each) follow its pipe reads.
    expect(sizes[0]).toBeGreaterThan(300_000);
    expect(Math.abs((sizes[1] ?? 0) - (sizes[0] ?? 0))).toBeLessThan(1024);
  });

  it('names the mode when current Gitaly refuses the bidi SSHUploadPack', async () => {
    const { head, direct } = await gitalyWithRepo({});
    const d = direct('stream');
    try {
      await expect(d.uploadPack('group/project', [head], 30_000)).rejects.toThrow(/^stream: UNIMPLEMENTED/);
    } finally {
      d.close();
    }
  });
});

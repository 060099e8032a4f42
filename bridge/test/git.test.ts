import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import { gitThroughBridge as runGit } from '../test-support/git-through-bridge.js';
import {
  git,
  type Harness,
  PROJECT,
  type RunningBridge,
  startHarness,
  USER,
} from '../test-support/harness.js';

let programs: CompiledPrograms;
let h: Harness;
let b: RunningBridge;
let bare: string;
beforeAll(async () => {
  // Pushes run mock Gitaly's hooks, which call the mock cell: they need the compiled hook program.
  programs = await compilePrograms(['mock-gitaly/hook-main.ts']);
  h = await startHarness({ hookProgram: programs.path('mock-gitaly/hook-main.ts') });
  bare = h.createRepo(PROJECT);
  b = await h.startBridge();
});
afterAll(async () => {
  await h?.close();
  programs?.cleanup();
});

/** Runs real git with the tunnel helper as its ssh. */
async function gitThroughBridge(
  args: string[],
  opts: { protocol: 'h1' | 'h2'; framed: boolean; cwd?: string },
) {
  return runGit(args, { ...opts, url: b.url, token: await h.token(USER.alice), cwd: opts.cwd ?? h.dir });
}

const REMOTE = `ssh://git@bridge.test/${PROJECT}.git`;

describe.each([
  { protocol: 'h1', framed: false },
  { protocol: 'h2', framed: true },
] as const)(
  'real git through the bridge and the real mock Gitaly over $protocol (framed: $framed)',
  (mode) => {
    const { protocol } = mode;

    it('clones, pushes a branch through the hooks, is refused on the protected branch, and fetches back', async () => {
      const dest = mkdtempSync(join(h.dir, `clone-${protocol}-`));
      const clone = await gitThroughBridge(['clone', REMOTE, dest], mode);
      expect(clone.stderr).not.toContain('fatal');
      expect(clone.code).toBe(0);
      expect(readFileSync(join(dest, 'README.md'), 'utf8')).toBe('# hello through the bridge\n');

      const branch = `topic-${protocol}`;
      writeFileSync(join(dest, `${protocol}.txt`), `pushed over ${protocol}\n`);
      git(['add', '.'], dest);
      git(['commit', '--quiet', '-m', `push over ${protocol}`], dest);
      const push = await gitThroughBridge(['push', 'origin', `HEAD:refs/heads/${branch}`], {
        ...mode,
        cwd: dest,
      });
      expect(push.code).toBe(0);
      // post-receive's message, from the mock cell through the hook, git and the bridge.
      expect(push.stderr).toContain(`To create a merge request for ${branch}, visit:`);
      const pushed = git(['rev-parse', 'HEAD'], dest).trim();
      expect(git(['--git-dir', bare, 'rev-parse', branch]).trim()).toBe(pushed);
      // The hooks got the receive-pack identity the bridge sent Gitaly (gl_id, gl_repository).
      const postReceive = h.cell.hookLog
        .calls()
        .find((c) => c.endpoint === 'post_receive' && JSON.stringify(c.body).includes(branch));
      expect(postReceive?.body).toMatchObject({ gl_repository: 'project-3', identifier: USER.alice });

      // alice is a Developer; `main` is for Maintainers: pre-receive asks the cell, which refuses.
      const refused = await gitThroughBridge(['push', 'origin', 'HEAD:main'], { ...mode, cwd: dest });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(
        'GitLab: You are not allowed to push code to protected branches on this project.',
      );
      expect(refused.stderr).toContain('[remote rejected] HEAD -> main (pre-receive hook declined)');
      expect(git(['--git-dir', bare, 'rev-parse', 'main']).trim()).not.toBe(pushed);

      const again = mkdtempSync(join(h.dir, `again-${protocol}-`));
      git(['init', '--quiet', again]);
      const fetch = await gitThroughBridge(['fetch', REMOTE, `${branch}:${branch}`], { ...mode, cwd: again });
      expect(fetch.code).toBe(0);
      expect(git(['show', `${branch}:${protocol}.txt`], again)).toBe(`pushed over ${protocol}\n`);
    });

    it('serves git archive --remote', async () => {
      const r = await gitThroughBridge(
        ['archive', `--remote=${REMOTE}`, '--format=tar', 'HEAD', 'README.md'],
        mode,
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('# hello through the bridge');
    });
  },
);

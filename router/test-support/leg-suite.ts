import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellProtocol } from '../cells/transport.js';
import { collect, gitViaSsh, remoteUrl } from './clients.js';
import { git } from './git-repos.js';
import { startTestStack, type TestStack } from './stack.js';

const HTTP_VERSION: Record<CellProtocol, string> = { http1: '1.1', h2c: '2.0' };

/**
 * One tunnel leg end to end: real OpenSSH and git → the router → fake cells speaking `protocol`
 * (running real git). A clone whose pack spans many response chunks, and a push whose pack spans
 * many request chunks, both over that protocol only (every call the cells saw says so).
 */
export function describeTunnelLeg(protocol: CellProtocol): void {
  describe(`the ${protocol} tunnel leg`, () => {
    let stack: TestStack;
    let work: string;
    const big = randomBytes(3 << 20);

    beforeAll(async () => {
      stack = await startTestStack({}, { protocol });
      work = mkdtempSync(join(stack.dir, 'work-'));
      await stack.addProject('leg/project', 'cell_eu0', { 'README.md': 'leg\n' });
      const seed = join(work, 'seed');
      await git(['clone', '-q', stack.world.projects[0]?.repo ?? '', seed]);
      writeFileSync(join(seed, 'big.bin'), big);
      await git(['add', 'big.bin'], { cwd: seed });
      await git(['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'big'], { cwd: seed });
      await git(['push', '-q', 'origin', 'HEAD'], { cwd: seed });
    });

    afterAll(async () => {
      await stack?.close();
    });

    it('clones a pack of several MiB and pushes one back', async () => {
      const dest = join(work, 'clone');
      const cloned = await collect(
        gitViaSsh(stack.alice.privateKey, stack.sshPort, [
          'clone',
          remoteUrl(stack.sshPort, 'leg/project'),
          dest,
        ]),
      );
      expect(cloned.stderr).not.toMatch(/fatal/);
      expect(cloned.code).toBe(0);
      expect(readFileSync(join(dest, 'big.bin')).equals(big)).toBe(true);

      writeFileSync(join(dest, 'pushed.bin'), randomBytes(4 << 20));
      await git(['add', 'pushed.bin'], { cwd: dest });
      await git(['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', `pushed over ${protocol}`], {
        cwd: dest,
      });
      const pushed = await collect(
        gitViaSsh(stack.alice.privateKey, stack.sshPort, ['push', 'origin', 'HEAD'], { cwd: dest }),
      );
      expect(pushed.stderr).not.toMatch(/fatal|error/);
      expect(pushed.code).toBe(0);
      const repo = stack.world.projects[0]?.repo ?? '';
      const { stdout } = await git(['--git-dir', repo, 'log', '-1', '--format=%s']);
      expect(stdout.trim()).toBe(`pushed over ${protocol}`);

      const calls = stack.cell('cell_eu0').requests;
      const push = calls.filter((r) => r.path.endsWith('/ssh-receive-pack')).at(-1);
      expect(push?.body.length).toBeGreaterThan(4 << 20);
      expect(calls.filter((r) => r.path.endsWith('/ssh-upload-pack')).every((r) => r.exitCode === 0)).toBe(
        true,
      );
      const everyCell = [...stack.cells.values()].flatMap((c) => c.requests);
      expect(new Set(everyCell.map((r) => r.httpVersion))).toEqual(new Set([HTTP_VERSION[protocol]]));
    });
  });
}

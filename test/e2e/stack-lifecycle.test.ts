import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFlagsFor } from '../../stack/node-flags.js';
import { waitUntil } from '../helpers/poll.js';
import { isAlive } from '../helpers/procs.js';
import { run } from '../helpers/run.js';
import { startStack } from '../helpers/stack.js';

describe('npm start stack', () => {
  it('writes stack.json with the documented shape, runs two stacks side by side and stops without leftovers', async () => {
    const [a, b] = await Promise.all([startStack(), startStack()]);
    try {
      for (const s of [a, b]) {
        const j = s.json;
        expect(j.router.ssh).toMatch(/^127\.0\.0\.1:\d+$/);
        expect(j.router.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(j.cells.map((c) => c.name)).toEqual(['cell_us0', 'cell_us1', 'cell_eu0', 'cell_eu1']);
        expect(j.cells.filter((c) => c.legacy).length).toBe(1);
        for (const c of j.cells) {
          expect(c.bridge).toMatch(/^http:\/\//);
          expect(c.metrics).toMatch(/\/metrics$/);
          expect(existsSync(c.storage)).toBe(true);
        }
        for (const u of j.users) {
          expect(statSync(u.privateKey ?? '').mode & 0o077).toBe(0);
          expect(readFileSync(u.publicKey, 'utf8')).toMatch(/^ssh-ed25519 /);
        }
        for (const p of j.projects) expect(existsSync(`${p.repository}/HEAD`)).toBe(true);
        for (const f of Object.values(j.secrets)) expect(statSync(f).mode & 0o777).toBe(0o600);
        const r = await run('git', ['ls-remote', s.url('gitlab-org/gitlab-test')], { env: s.gitEnv('bob') });
        expect(r.stderr).toBe('');
        expect(r.stdout).toMatch(/refs\/heads\/main/);
      }
      // Each service runs with its node flags (stack/node-flags.ts).
      for (const pid of Object.values(a.json.pids)) {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const main = argv.findIndex((arg) => /dist\/[^/]+\/main\.js$/.test(arg));
        const service = argv[main]?.split('/').at(-2) ?? '';
        expect(argv.slice(1, main), `${service} (pid ${pid})`).toEqual(nodeFlagsFor(service));
      }
      expect(a.portOffset).not.toBe(b.portOffset);
      expect(a.json.router.ssh).not.toBe(b.json.router.ssh);
    } finally {
      const pids = [a, b].flatMap((s) => Object.values(s.json.pids));
      // Ctrl-C equivalent: the stack itself must end every service and exit 0.
      expect(await Promise.all([a.terminate(), b.terminate()])).toEqual([0, 0]);
      await waitUntil(
        () => pids.every((p) => !isAlive(p)),
        5_000,
        'every service of both stacks to end',
        100,
      );
      expect(existsSync(join(a.dataDir, 'stack.json'))).toBe(false);
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 420_000);
});

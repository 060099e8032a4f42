/**
 * A world with an edge (`startWorld({ edge })`): both routers (learn and topology mode) reach every
 * cell through the edge, a real `git clone` and `git push` over our SSH routers pass through it
 * (the proxy's own log shows the tunnel's requests), and stack.json says which edge runs and where.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../../fixture/index.js';
import { run } from '../../test/helpers/run.js';

const TOPOLOGY = join(import.meta.dirname, 'world.json');
const PROJECT = 'north-group/north-project';
const scratch = mkdtempSync(join(tmpdir(), 'world-edge-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What the proxy logged: nginx's access log, HAProxy's lines in the edge service's log. */
function proxyLog(world: World): string {
  const edge = world.stackJson.edge;
  return edge.proxy === 'nginx'
    ? readFileSync(join(world.dataDir, 'edge', 'access.log'), 'utf8')
    : readFileSync(join(world.dataDir, 'logs', 'edge.log'), 'utf8');
}

describe.each(['nginx', 'haproxy'])('a world behind --edge %s', (kind) => {
  let world: World;
  afterAll(async () => {
    await world?.stop();
  });

  it('says in stack.json which edge runs, its config, pid and per cell what the routers dial', {
    timeout: 180_000,
  }, async () => {
    world = await startWorld({ topology: TOPOLOGY, edge: kind });
    const { edge, cells } = world.stackJson;
    expect(edge).toMatchObject({ kind, proxy: kind, figures: { timeScale: 1, bufferSshPackBody: false } });
    expect(edge.configFile).toBe(
      join(world.dataDir, 'edge', kind === 'nginx' ? 'nginx.conf' : 'haproxy.cfg'),
    );
    expect(process.kill(edge.pid as number, 0)).toBe(true);
    expect(edge.cells).toEqual(cells.map((c) => ({ cell: c.name, dial: c.shellEndpoint, bridge: c.bridge })));
    const routerConfig = JSON.parse(readFileSync(join(world.dataDir, 'config', 'router.json'), 'utf8'));
    expect(routerConfig.cells.map((c: { url: string }) => c.url)).toEqual(cells.map((c) => c.shellEndpoint));
  });

  it('clones and pushes through the edge over both routers', { timeout: 120_000 }, async () => {
    for (const via of ['router', 'topology'] as const) {
      const dir = join(scratch, `${kind}-${via}`);
      const env = world.gitEnv('wren');
      const clone = await run('git', ['clone', world.sshUrl(PROJECT, via), dir], { env });
      expect(clone.code, clone.stderr).toBe(0);
      const git = (...args: string[]) => run('git', ['-C', dir, ...args], { env });
      await git('-c', 'user.name=w', '-c', 'user.email=w@x', 'commit', '--allow-empty', '-m', `via ${via}`);
      const push = await git('push', 'origin', 'HEAD');
      expect(push.code, push.stderr).toBe(0);
    }
    const log = proxyLog(world);
    expect(log).toContain(`POST /${PROJECT}.git/ssh-upload-pack`);
    expect(log).toContain(`POST /${PROJECT}.git/ssh-receive-pack`);
  });
});

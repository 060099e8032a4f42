import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTER_TOPOLOGY } from '../../stack/compose-plan.js';
import { stackPorts } from '../../stack/layout.js';
import { DEMO_TOPOLOGY_FILE } from '../../stack/topology-file-load.js';
import { detectEngine } from './engine.js';
import { loadCompose, World } from './world.js';

/*
 * A topology file of the user's own, given to compose as README "Containers" says: bind-mounted into
 * the init container and named by STACK_TOPOLOGY. The world (without the Geo site and the learn
 * router, which this check does not need) serves the file's own project through the topology router.
 */

const engine = await detectEngine();
const required = process.env.CONTAINERS_REQUIRED === '1';
const OWN_PROJECT = 'my-company/from-my-file';

describe.skipIf(!engine.ok && !required)('compose with a topology file of the user’s own', () => {
  let world: World | undefined;
  let dir: string;

  beforeAll(async () => {
    if (!engine.ok) throw new Error(`CONTAINERS_REQUIRED=1 but ${engine.reason}`);
    dir = await mkdtemp(join(tmpdir(), 'cells-ct-own-'));
    const file = JSON.parse(readFileSync(DEMO_TOPOLOGY_FILE, 'utf8')) as Record<string, unknown> & {
      projects: Array<{ path: string; visibility: string }>;
    };
    delete file.$schema;
    file.projects.push({ path: OWN_PROJECT, visibility: 'public' });
    await writeFile(join(dir, 'my-world.json'), JSON.stringify(file, null, 2));
    await chmod(dir, 0o755);
    const compose = loadCompose();
    const init = compose.services.init;
    if (!init) throw new Error('compose.yaml has no init service');
    init.environment = { ...init.environment, STACK_TOPOLOGY: '/world/my-world.json' };
    init.volumes = [...(init.volumes ?? []), `${join(dir, 'my-world.json')}:/world/my-world.json:ro`];
    const names = Object.keys(compose.services).filter(
      (n) => !/-geo$|^client$|^gitaly-gitlab$|^router$/.test(n),
    );
    world = new World(engine, compose, (line) => process.stderr.write(`test/containers: ${line}\n`));
    await world.up(names);
  }, 600_000);

  afterAll(async () => {
    await world?.down();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('clones the file’s own project through the topology router', async () => {
    const env = { ROUTER_SSH: `${ROUTER_TOPOLOGY}:${stackPorts(0).routerTopologySsh}` };
    const r = await (world as World).runClient(['clone', OWN_PROJECT, 'alice'], env);
    expect(r.output, r.output).toMatch(/scenario: 1 ok, 0 failed/);
    expect(r.output).toContain(`CLONE ${OWN_PROJECT} alice ok`);
    expect(r.exitCode).toBe(0);
  });
});

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { type EdgeSpec, resolveEdge } from '../edge/figures.js';
import { validateTopology } from '../mock-cell/topology-validate.js';
import { ensureRepositories, ensureSecretsAndKeys } from './demo-data.js';
import { writeEdgeFiles } from './edge-plan.js';
import { pickFreePorts } from './free-ports.js';
import { ensureGeoSecrets, ensureReplicas, geoCells, geoSites } from './geo-plan.js';
import { HOST, LOCAL_NET, portsOf, type StackPorts, stackPaths, stackPorts } from './layout.js';
import { mainRouter, planServices } from './stack-config.js';
import type { StackSettings } from './stack-settings.js';
import { worldTopology } from './topology-file-convert.js';
import { TopologyFileError } from './topology-file-load.js';
import type { World } from './topology-file-resolve.js';
import { gitlabShellConfigYml } from './topology-plan.js';

/** The ports of a world: picked free (`--free-ports`), or the defaults plus the offset, which must not clash. */
export async function worldPorts(world: World, settings: StackSettings, geo: boolean): Promise<StackPorts> {
  const cellIds = world.cells.map((c) => c.id);
  const geoIds = geo ? geoCells(world).map((c) => c.id) : [];
  if (settings.freePorts) return pickFreePorts(cellIds, geoIds);
  const ports = stackPorts(settings.portOffset);
  const all = portsOf(ports, cellIds, geoIds);
  const clash = all.find((p, i) => all.indexOf(p) !== i);
  if (clash !== undefined || all.some((p) => p > 65_535))
    throw new TopologyFileError(world.file, [
      `cells: with these cell ids the default ports${clash === undefined ? ' pass 65535' : ` share port ${clash}`}; start with --free-ports`,
    ]);
  return ports;
}

/** The world's edge: `--edge` / `STACK_EDGE`, else the topology file's `edge`, else none (EdgeFileError when bad). */
export function worldEdge(world: World, settings: StackSettings): EdgeSpec {
  return resolveEdge(settings.edge ?? world.edge ?? 'none', settings.edgeTimeScale);
}

/** Data, keys, configs and the service plan of a world under the data folder (kept between runs where they exist). */
export async function prepareStack(world: World, settings: StackSettings) {
  const edge = worldEdge(world, settings);
  const paths = stackPaths(settings.dataDir);
  const geo = settings.geo === 'on' && world.geo.length > 0;
  const ports = await worldPorts(world, settings, geo);
  for (const dir of [paths.root, paths.configDir, paths.logDir]) await mkdir(dir, { recursive: true });
  await rm(paths.stackJson, { force: true });
  const publicKeys = await ensureSecretsAndKeys(paths, world);
  const topology = worldTopology(world, ports, paths, publicKeys, LOCAL_NET);
  // The public URL (LFS hrefs, clone URLs) is the main router's HTTP front: the topology router's
  // when the world starts no learn router.
  topology.externalUrl = mainRouter(world, ports).http;
  if (geo) {
    await ensureGeoSecrets(world, paths);
    topology.geoSites = geoSites(world, paths, ports, mainRouter(world, ports).ssh);
  }
  try {
    validateTopology(topology);
  } catch (err) {
    throw new TopologyFileError(world.file, [`root: the mock cell refuses it: ${(err as Error).message}`]);
  }
  await writeFile(paths.topology, `${JSON.stringify(topology, null, 2)}\n`);
  const repositories = await ensureRepositories(topology, world);
  if (geo) await ensureReplicas(world, repositories, paths);
  await writeKnownHosts(paths, [
    ...(world.routers.learn ? [ports.routerSsh] : []),
    ...(world.routers.topology ? [ports.routerTopologySsh] : []),
    ...(geo ? geoCells(world).map((c) => ports.geo(c.id).ssh) : []),
  ]);
  await writeFile(`${paths.root}/gitlab-shell-config.yml`, gitlabShellConfigYml(world, paths, ports));
  const running = edge.kind === 'none' ? undefined : edge;
  if (running) await writeEdgeFiles(world, paths, ports, running);
  const planned = planServices(world, paths, ports, LOCAL_NET, settings.logLevel, {
    topology: true,
    geo,
    ...(running ? { edge: running } : {}),
  });
  for (const p of planned) await writeFile(p.spec.configFile, `${JSON.stringify(p.config, null, 2)}\n`);
  return { paths, ports, topology, repositories, planned, geo, edge };
}

/** Every host key of the routers (Ed25519, ECDSA, RSA) at every SSH port, so a client may ask for any type. */
async function writeKnownHosts(paths: ReturnType<typeof stackPaths>, sshPorts: number[]): Promise<void> {
  const hostKeys = await Promise.all(
    paths.hostKeys.map(async (f) =>
      (await readFile(`${f}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' '),
    ),
  );
  await writeFile(
    `${paths.root}/known_hosts`,
    sshPorts.flatMap((p) => hostKeys.map((k) => `[${HOST}]:${p} ${k}\n`)).join(''),
  );
}

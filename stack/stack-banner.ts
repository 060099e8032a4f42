import { AccessLevel } from '../mock-cell/topology-types.js';
import { geoCells, geoSiteName } from './geo-plan.js';
import { HOST, type StackPaths, type StackPorts } from './layout.js';
import { mainRouter } from './stack-config.js';
import { DEMO_TOPOLOGY_FILE } from './topology-file-load.js';
import type { World } from './topology-file-resolve.js';

const ROLE_NAME: Record<number, string> = {
  [AccessLevel.guest]: 'Guest',
  [AccessLevel.reporter]: 'Reporter',
  [AccessLevel.developer]: 'Developer',
  [AccessLevel.maintainer]: 'Maintainer',
  [AccessLevel.owner]: 'Owner',
};

/**
 * Whom the banner's clone line acts as: the first project membership of Reporter or above of a
 * user with a generated key (the demo: alice, Developer in my-company/my-project), else such a
 * user and the first project.
 */
function cloneExample(world: World): { user: string; project: string; why: string } | undefined {
  const keyed = new Set(world.users.filter((u) => u.publicKey === undefined).map((u) => u.username));
  const member = world.members.find(
    (m) => m.project !== undefined && m.accessLevel >= AccessLevel.reporter && keyed.has(m.user),
  );
  if (member?.project !== undefined)
    return {
      user: member.user,
      project: member.project,
      why: `${ROLE_NAME[member.accessLevel]} in ${member.project}`,
    };
  const user = world.users.find((u) => keyed.has(u.username));
  const project = world.projects[0];
  if (!user || !project) return undefined;
  const path = `${project.namespace}/${project.path}`;
  return { user: user.username, project: path, why: `${user.admin ? 'administrator' : 'user'}; ${path}` };
}

function cellOfProject(world: World, path: string): string {
  const ns = world.namespaces.find((n) => n.path === path.slice(0, path.indexOf('/')));
  return world.organizations.find((o) => o.path === ns?.organization)?.cell ?? '?';
}

/** `http://<user>:<password>@<router host>/<project>.git`. */
function httpCloneUrl(world: World, routerHttp: string, example: { user: string; project: string }): string {
  const url = new URL(`${routerHttp}/${example.project}.git`);
  url.username = example.user;
  url.password = world.users.find((u) => u.username === example.user)?.password ?? '';
  return url.href;
}

/** What the stack prints once every service of it is listening. */
export function upBanner(world: World, paths: StackPaths, ports: StackPorts, geo: boolean): string {
  const router = mainRouter(world, ports);
  const example = cloneExample(world);
  const sshCommand = (user: string) =>
    `ssh -i ${paths.userKey(user)} -o IdentitiesOnly=yes -o UserKnownHostsFile=${paths.root}/known_hosts`;
  const demo = world.file === DEMO_TOPOLOGY_FILE;
  return [
    '',
    demo
      ? `GitLab Cells demo stack is up. Data: ${paths.root}  Logs: ${paths.logDir}`
      : `GitLab Cells stack of ${world.file} is up. Data: ${paths.root}  Logs: ${paths.logDir}`,
    `Router SSH ${router.ssh}, HTTP ${router.http}; stack.json: ${paths.stackJson}`,
    ...(world.routers.learn && world.routers.topology
      ? [
          `Topology router SSH ${HOST}:${ports.routerTopologySsh}, HTTP http://${HOST}:${ports.routerTopologyHttp}; Topology Service gRPC ${HOST}:${ports.topologyGrpc}, REST http://${HOST}:${ports.topologyHttp}`,
        ]
      : [`Topology Service gRPC ${HOST}:${ports.topologyGrpc}, REST http://${HOST}:${ports.topologyHttp}`]),
    ...(geo
      ? geoCells(world).map(
          (c) =>
            `Geo secondary of ${c.name} (${geoSiteName(c)}): SSH ${HOST}:${ports.geo(c.id).ssh} (pushes go on to the primary)`,
        )
      : []),
    `gitlab-shell config for this stack: ${paths.root}/gitlab-shell-config.yml`,
    '',
    ...(example
      ? [
          `Clone as ${example.user} (${example.why}, served by ${cellOfProject(world, example.project)}):`,
          `  export GIT_SSH_COMMAND="${sshCommand(example.user)}"`,
          `  git clone ssh://git@${router.ssh}/${example.project}.git`,
          'or over HTTP (Basic auth with the password of the topology file):',
          `  git clone ${httpCloneUrl(world, router.http, example)}`,
          '',
        ]
      : []),
    `Other users: ${world.users.map((u) => u.username).join(', ')} (keys in ${paths.keysDir}).`,
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

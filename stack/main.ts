import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { ConfigError, int, loadConfig, oneOf, str } from '../lib/config.js';
import { ensureDemoRepositories, ensureDemoSecretsAndKeys } from './demo-data.js';
import { demoTopology } from './demo-topology.js';
import { ensureGeoSecrets, ensureReplicas, GEO_SITE, geoSites } from './geo-plan.js';
import { EXIT_ADDRESS_IN_USE, HOST, LOCAL_NET, nextFreeOffset, stackPaths, stackPorts } from './layout.js';
import { DEFAULT_RESTART_POLICY, RestartPolicy } from './restart-policy.js';
import { planServices, stackJson } from './stack-config.js';
import {
  AddressInUseError,
  StartError,
  StoppingError,
  Supervisor,
  type SupervisorEvents,
} from './supervisor.js';
import { gitlabShellConfigYml } from './topology-plan.js';
import { openWorld } from './world.js';
import { watchParent, worldArgs } from './world-args.js';
import { withControls } from './world-controls.js';

/**
 * What a user reads when a port is taken: the service, the address and the two ways out. Called
 * once every service is stopped, so the suggested offset is checked against this stack's own ports too.
 */
async function addressInUseMessage(err: AddressInUseError, offset: number): Promise<string> {
  const { address } = err.address;
  const port = address.slice(address.lastIndexOf(':') + 1);
  const free = await nextFreeOffset(offset);
  const other =
    free === undefined
      ? 'STACK_PORT_OFFSET=<n> npm start with another offset'
      : `STACK_PORT_OFFSET=${free} npm start (every port of that offset is free right now)`;
  return [
    `stack failed to start: ${err.message} (another stack, or an unrelated server).`,
    `Nothing of this stack is running: every service it had started has been stopped.`,
    `Start it on other ports, e.g. ${other}, or free ${address} (\`ss -ltnp 'sport = :${port}'\` or \`lsof -i :${port}\` shows which process holds it).`,
    '',
  ].join('\n');
}

/**
 * `npm start`: creates the demo data under STACK_DATA_DIR (default ./var), starts every service as
 * its own process, writes <data>/stack.json and prints how to clone. SIGINT/SIGTERM stop everything.
 */
async function main(): Promise<void> {
  const settings = loadConfig<StackSettings>(
    {
      dataDir: { validate: str, default: './var', env: 'STACK_DATA_DIR' },
      portOffset: { validate: int(0, 50_000), default: 0, env: 'STACK_PORT_OFFSET' },
      logLevel: { validate: str, default: 'info', env: 'STACK_LOG_LEVEL' },
      geo: { validate: oneOf('on', 'off'), default: 'on', env: 'STACK_GEO' },
      restartStableMs: {
        validate: int(1000),
        default: DEFAULT_RESTART_POLICY.stableMs,
        env: 'STACK_RESTART_STABLE_MS',
      },
    },
    { prefix: 'STACK' },
  );
  const flags = worldArgs(process.argv, process.env);
  const { paths, ports, topology, repositories, planned } = await prepareStack(settings);
  const world = await openWorld(paths.root);

  let shuttingDown = false;
  let contract: Record<string, unknown> | undefined;
  const supervisor: Supervisor = new Supervisor(
    paths.logDir,
    restartReporter(paths, {
      // Undefined until the stack is up and while it stops: stack.json is then not rewritten.
      current: () =>
        contract === undefined || shuttingDown ? undefined : { ...contract, pids: supervisor.pids },
      giveUp: (message) => {
        if (shuttingDown) return;
        process.stderr.write(message);
        void shutdown(1);
      },
    }),
    new RestartPolicy({ ...DEFAULT_RESTART_POLICY, stableMs: settings.restartStableMs }),
    world.router,
  );
  /** Stops every service, then writes `message` (if any) and exits. */
  const shutdown = async (code: number, message?: () => Promise<string>) => {
    if (shuttingDown) return;
    shuttingDown = true;
    await rm(paths.stackJson, { force: true });
    await supervisor.stop();
    await world.close();
    if (flags.ephemeral) await rm(paths.root, { recursive: true, force: true });
    if (message) process.stderr.write(await message());
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  watchParent(flags, () => void shutdown(0));

  try {
    for (const tier of [0, 1, 2])
      await supervisor.start(
        withControls(planned)
          .filter((p) => p.tier === tier)
          .map((p) => p.spec),
      );
  } catch (err) {
    // Ctrl-C, or a service that was already up has died meanwhile: shutdown() is under way.
    if (err instanceof StoppingError || shuttingDown) return;
    if (err instanceof AddressInUseError) {
      await shutdown(EXIT_ADDRESS_IN_USE, () => addressInUseMessage(err, settings.portOffset));
      return;
    }
    await shutdown(1, async () => startFailureMessage(err));
    return;
  }

  contract = { ...stackJson(paths, ports, topology, repositories), ...world.contract };
  await writeStackJson(paths.stackJson, { ...contract, pids: supervisor.pids });
  process.stdout.write(
    upBanner(
      paths,
      ports,
      topology.users.map((u) => u.username),
      topology.geoSites !== undefined,
    ),
  );
}

/**
 * How `npm start` reports what its supervisor does: each restart on stderr (the service's own log
 * gets the supervisor's line too), and stack.json rewritten with the pids that run now.
 */
function restartReporter(
  paths: ReturnType<typeof stackPaths>,
  stack: { current: () => Record<string, unknown> | undefined; giveUp: (message: string) => void },
): SupervisorEvents {
  let rewriting = Promise.resolve();
  return {
    restarting: (name, code, { attempt, delayMs }) => {
      process.stderr.write(
        `${name} exited unexpectedly (code ${code}); restarting it in ${delayMs} ms (attempt ${attempt}); its log: ${paths.logDir}/${name}.log\n`,
      );
    },
    restarted: (name, pid, attempt) => {
      process.stderr.write(`${name} is up again (pid ${pid}, attempt ${attempt})\n`);
      const contract = stack.current();
      if (contract === undefined) return;
      rewriting = rewriting
        .then(() => writeStackJson(paths.stackJson, contract))
        .catch((err: unknown) => {
          process.stderr.write(`stack.json not updated: ${(err as Error).message}\n`);
        });
    },
    gaveUp: (name, code, logTail) =>
      stack.giveUp(
        `\n${name} exited unexpectedly (code ${code}) and kept failing after every restart; stopping the stack. Last log lines:\n${logTail}\n`,
      ),
  };
}

/** Written atomically: readers that poll for the file never see half of it. */
async function writeStackJson(file: string, contract: Record<string, unknown>): Promise<void> {
  await writeFile(`${file}.tmp`, `${JSON.stringify(contract, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

interface StackSettings {
  dataDir: string;
  portOffset: number;
  logLevel: string;
  /** `STACK_GEO`: the Geo secondary of cell_us0 (`geo-plan.ts`) runs (`on`) or not (`off`). */
  geo: 'on' | 'off';
  /** `STACK_RESTART_STABLE_MS`: up this long, a service's next death counts as its first again. */
  restartStableMs: number;
}

/** Demo data, configs and the service plan under the data folder (kept between runs where it exists). */
async function prepareStack(settings: StackSettings) {
  const paths = stackPaths(settings.dataDir);
  const ports = stackPorts(settings.portOffset);
  for (const dir of [paths.root, paths.configDir, paths.logDir]) await mkdir(dir, { recursive: true });
  await rm(paths.stackJson, { force: true });
  const publicKeys = await ensureDemoSecretsAndKeys(paths);
  const geo = settings.geo === 'on';
  const topology = demoTopology(ports, paths, publicKeys, LOCAL_NET);
  if (geo) {
    await ensureGeoSecrets(paths);
    topology.geoSites = geoSites(paths, ports);
  }
  await writeFile(paths.topology, `${JSON.stringify(topology, null, 2)}\n`);
  const repositories = await ensureDemoRepositories(topology);
  if (geo) await ensureReplicas(repositories, paths);
  // Every host key of the routers (Ed25519, ECDSA, RSA), so a client may ask for any type.
  const hostKeys = await Promise.all(
    paths.hostKeys.map(async (f) =>
      (await readFile(`${f}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' '),
    ),
  );
  await writeFile(
    `${paths.root}/known_hosts`,
    [ports.routerSsh, ports.routerTopologySsh, ...(geo ? [ports.geoSsh] : [])]
      .flatMap((p) => hostKeys.map((k) => `[${HOST}]:${p} ${k}\n`))
      .join(''),
  );
  await writeFile(`${paths.root}/gitlab-shell-config.yml`, gitlabShellConfigYml(paths, ports));
  const planned = planServices(paths, ports, LOCAL_NET, settings.logLevel, { topology: true, geo });
  for (const p of planned) await writeFile(p.spec.configFile, `${JSON.stringify(p.config, null, 2)}\n`);
  return { paths, ports, topology, repositories, planned };
}

function startFailureMessage(err: unknown): string {
  return err instanceof StartError
    ? `stack failed to start: ${err.message}; every service of this stack has been stopped. Last log lines of ${err.service} (${err.logFile}):\n${err.logTail}\n`
    : `stack failed to start: ${(err as Error).message}\n`;
}

/** What `npm start` prints once every service of this stack is listening. */
function upBanner(
  paths: ReturnType<typeof stackPaths>,
  ports: ReturnType<typeof stackPorts>,
  users: string[],
  geo: boolean,
): string {
  const sshCommand = `ssh -i ${paths.userKey('alice')} -o IdentitiesOnly=yes -o UserKnownHostsFile=${paths.root}/known_hosts`;
  return [
    '',
    `GitLab Cells demo stack is up. Data: ${paths.root}  Logs: ${paths.logDir}`,
    `Router SSH ${HOST}:${ports.routerSsh}, HTTP http://${HOST}:${ports.routerHttp}; stack.json: ${paths.stackJson}`,
    `Topology router SSH ${HOST}:${ports.routerTopologySsh}, HTTP http://${HOST}:${ports.routerTopologyHttp}; Topology Service gRPC ${HOST}:${ports.topologyGrpc}, REST http://${HOST}:${ports.topologyHttp}`,
    ...(geo
      ? [`Geo secondary of cell_us0 (${GEO_SITE}): SSH ${HOST}:${ports.geoSsh} (pushes go on to the primary)`]
      : []),
    `gitlab-shell config for this stack: ${paths.root}/gitlab-shell-config.yml`,
    '',
    'Clone as alice (Developer in my-company/my-project, served by cell_eu0):',
    `  export GIT_SSH_COMMAND="${sshCommand}"`,
    `  git clone ssh://git@${HOST}:${ports.routerSsh}/my-company/my-project.git`,
    '',
    `Other users: ${users.join(', ')} (keys in ${paths.keysDir}).`,
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(
    `${err instanceof ConfigError ? 'invalid stack settings' : 'stack error'}: ${(err as Error).message}\n`,
  );
  process.exit(err instanceof ConfigError ? 78 : 1);
});

import { rename, rm, writeFile } from 'node:fs/promises';
import { EdgeFileError } from '../edge/figures.js';
import { ConfigError } from '../lib/config.js';
import { edgeStackJson } from './edge-plan.js';
import { EXIT_ADDRESS_IN_USE, nextFreeOffset, type stackPaths } from './layout.js';
import { DEFAULT_RESTART_POLICY, RestartPolicy } from './restart-policy.js';
import { upBanner } from './stack-banner.js';
import { stackJson } from './stack-config.js';
import { prepareStack } from './stack-prepare.js';
import { type StackSettings, stackSettings } from './stack-settings.js';
import { AddressInUseError, StartError, StoppingError } from './start-errors.js';
import { Supervisor, type SupervisorEvents } from './supervisor.js';
import { loadTopologyFile, TopologyFileError } from './topology-file-load.js';
import { openWorld } from './world.js';
import { watchParent, worldArgs } from './world-args.js';
import { withControls } from './world-controls.js';

/**
 * What a user reads when a port is taken: the service, the address and the two ways out. Called
 * once every service is stopped, so the suggested offset is checked against this stack's own ports too.
 */
async function addressInUseMessage(err: AddressInUseError, settings: StackSettings): Promise<string> {
  const { address } = err.address;
  const port = address.slice(address.lastIndexOf(':') + 1);
  const free = settings.freePorts ? undefined : await nextFreeOffset(settings.portOffset);
  const other = settings.freePorts
    ? 'again with --free-ports (a port picked free was taken before its service bound it)'
    : free === undefined
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
 * `npm start` / `node dist/stack/main.js [flags]`: reads the topology file (default the demo),
 * creates its data under the data folder, starts every service as its own process, writes
 * <data>/stack.json and prints how to clone. SIGINT/SIGTERM stop everything.
 */
async function main(): Promise<void> {
  const settings = stackSettings(process.argv.slice(2));
  const world = worldWithProfile(loadTopologyFile(settings.topology), settings.tunnelProfile);
  const flags = worldArgs(process.argv, process.env);
  const { paths, ports, topology, repositories, planned, geo, edge } = await prepareStack(world, settings);
  const channel = await openWorld(paths.root);

  let shuttingDown = false;
  let contract: Record<string, unknown> | undefined;
  const supervisor: Supervisor = new Supervisor(
    paths.logDir,
    restartReporter(paths, {
      // Undefined until the stack is up and while it stops: stack.json is then not rewritten.
      current: () =>
        contract === undefined || shuttingDown
          ? undefined
          : { ...contract, edge: edgeStackJson(world, paths, ports, edge), pids: supervisor.pids },
      giveUp: (message) => {
        if (shuttingDown) return;
        process.stderr.write(message);
        void shutdown(1);
      },
    }),
    new RestartPolicy({ ...DEFAULT_RESTART_POLICY, stableMs: settings.restartStableMs }),
    channel.router,
  );
  /** Stops every service, then writes `message` (if any) and exits. */
  const shutdown = async (code: number, message?: () => Promise<string>) => {
    if (shuttingDown) return;
    shuttingDown = true;
    await rm(paths.stackJson, { force: true });
    await supervisor.stop();
    await channel.close();
    if (flags.ephemeral) await rm(paths.root, { recursive: true, force: true });
    if (message) process.stderr.write(await message());
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  watchParent(flags, () => void shutdown(0));

  const failure = await startTiers(supervisor, planned);
  if (failure !== undefined) {
    // Ctrl-C, or a service that was already up has died meanwhile: shutdown() is under way.
    if (failure instanceof StoppingError || shuttingDown) return;
    if (failure instanceof AddressInUseError) {
      await shutdown(EXIT_ADDRESS_IN_USE, () => addressInUseMessage(failure, settings));
      return;
    }
    await shutdown(1, async () => startFailureMessage(failure));
    return;
  }
  contract = {
    ...stackJson(world, paths, ports, topology, repositories, edgeStackJson(world, paths, ports, edge)),
    ...channel.contract,
  };
  await writeStackJson(paths.stackJson, { ...contract, pids: supervisor.pids });
  process.stdout.write(upBanner(world, paths, ports, geo));
}

/** The topology file's world, its routers on the profile the command line gives, if it gives one. */
function worldWithProfile<W extends { routers: { tunnelProfile: string } }>(
  file: W,
  profile: string | undefined,
): W {
  return { ...file, routers: { ...file.routers, tunnelProfile: profile ?? file.routers.tunnelProfile } };
}

/** Starts the services tier by tier; returns what stopped the start, if anything did. */
async function startTiers(
  supervisor: Supervisor,
  planned: Awaited<ReturnType<typeof prepareStack>>['planned'],
): Promise<unknown> {
  try {
    for (const tier of [0, 1, 2])
      await supervisor.start(
        withControls(planned)
          .filter((p) => p.tier === tier)
          .map((p) => p.spec),
      );
    return undefined;
  } catch (err) {
    return err ?? new Error('start failed');
  }
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

function startFailureMessage(err: unknown): string {
  return err instanceof StartError
    ? `stack failed to start: ${err.message}; every service of this stack has been stopped. Last log lines of ${err.service} (${err.logFile}):\n${err.logTail}\n`
    : `stack failed to start: ${(err as Error).message}\n`;
}

/** EX_CONFIG: bad settings or a bad topology file; nothing was started. */
const EXIT_CONFIG = 78;

main().catch((err: unknown) => {
  if (err instanceof EdgeFileError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  if (err instanceof TopologyFileError) {
    process.stderr.write(`invalid topology file ${err.file}:\n${err.problems.join('\n')}\n`);
    process.exit(EXIT_CONFIG);
  }
  process.stderr.write(
    `${err instanceof ConfigError ? 'invalid stack settings' : 'stack error'}: ${(err as Error).message}\n`,
  );
  process.exit(err instanceof ConfigError ? EXIT_CONFIG : 1);
});

/**
 * @file The one `main` of every service: configuration → (bad: exit 78) → logger → build → listen →
 * signals → the `listening` line. `node dist/<service>/main.js --config <file.json>` is
 * `runService({ name, load, build })` and nothing else.
 */
import { setSigningSkewMs } from './clock.js';
import { ConfigError } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { stopOnSignals } from './shutdown.js';
import { supervisorPid } from './supervisor-watch.js';
import { ControlArgumentError, onControl } from './world-channel.js';

/** EX_CONFIG of sysexits.h: a bad setting, named on stderr. */
export const EXIT_BAD_CONFIG = 78;
const EXIT_FAILED = 1;
/** How long a service that failed to listen may take to release what it holds before exiting. */
const ABANDON_MS = 2_000;

/** A built service, not yet listening. */
export interface RunningService {
  /**
   * Binds every listener and resolves with the fields of the `listening` line. The stack's
   * supervisor reads the addresses there (`stack/supervisor.ts` `BOUND_FIELDS`), so their field names
   * are part of the stack's contract.
   */
  listen(): Promise<Record<string, unknown>>;
  /** Graceful stop (SIGINT, SIGTERM, supervisor gone); also called after a failed `listen`. */
  close(): Promise<void>;
  /** Extra fields for the `shutting down` line (in-flight counts, grace period). */
  shutdownDetails?(): Record<string, unknown>;
}

export interface ServiceDefinition<L extends { config: { readonly logLevel: string } }> {
  /** The `service` field of every log line and the prefix of every stderr message. */
  name: string;
  /** Reads and checks the configuration (and what else a bad setting breaks: secrets, topology). */
  load(argv: readonly string[], env: NodeJS.ProcessEnv): L;
  /** Builds the service without listening; a `ConfigError` thrown here is a bad setting too. */
  build(loaded: L, logger: Logger): RunningService | Promise<RunningService>;
  /** Other errors that mean a bad setting (e.g. an invalid topology file). */
  isBadConfig?(err: unknown): boolean;
}

/** Starts the service as this process's `main`; never resolves with a failure (it exits instead). */
export async function runService<L extends { config: { readonly logLevel: string } }>(
  def: ServiceDefinition<L>,
): Promise<void> {
  const badConfig = (err: unknown) => err instanceof ConfigError || def.isBadConfig?.(err) === true;
  try {
    await start(def, badConfig);
  } catch (err) {
    if (badConfig(err)) exit(EXIT_BAD_CONFIG, `${def.name}: bad configuration: ${(err as Error).message}`);
    exit(EXIT_FAILED, `${def.name}: failed to start: ${describe(err)}`);
  }
}

async function start<L extends { config: { readonly logLevel: string } }>(
  def: ServiceDefinition<L>,
  badConfig: (err: unknown) => boolean,
): Promise<void> {
  const loaded = def.load(process.argv, process.env);
  const supervisor = supervisorPid(process.env);
  const logger = createLogger(def.name, loaded.config.logLevel);
  const service = await def.build(loaded, logger);
  let fields: Record<string, unknown>;
  try {
    fields = await service.listen();
  } catch (err) {
    if (badConfig(err)) throw err;
    // Whatever did bind is released; the supervisor finds the reason (e.g. EADDRINUSE) on stderr.
    process.stderr.write(`${def.name}: failed to start: ${describe(err)}\n`);
    await Promise.race([
      service.close().catch(() => undefined),
      new Promise((r) => setTimeout(r, ABANDON_MS)),
    ]);
    process.exit(EXIT_FAILED);
  }
  stopOnSignals({
    logger,
    supervisorPid: supervisor,
    close: () => service.close(),
    ...(service.shutdownDetails ? { details: () => service.shutdownDetails?.() ?? {} } : {}),
  });
  acceptClockSkew(def.name);
  // Announced only once SIGTERM is handled: whoever waits for this line may signal at once.
  logger.info(fields, 'listening');
}

/**
 * The world op `clockSkew {ms, service?}` (`lib/contracts/world.ts`): every signer of this process
 * (`lib/clock.ts`) runs `ms` ahead (or behind); `service` limits it to the services of that name.
 */
function acceptClockSkew(name: string): void {
  onControl('world', 'clockSkew', (args) => {
    const { ms, service } = args;
    if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new ControlArgumentError('ms must be a number');
    if (service !== undefined && typeof service !== 'string')
      throw new ControlArgumentError('service must be a service name');
    if (service === undefined || service === name) setSigningSkewMs(ms);
    return { service: name, skewMs: service === undefined || service === name ? ms : null };
  });
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

function exit(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

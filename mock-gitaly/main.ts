import { ConfigError, readConfigFile } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { stopOnSignals } from '../lib/shutdown.js';
import { supervisorPid } from '../lib/supervisor-watch.js';
import { type GitalyConfig, loadGitalyConfig } from './config.js';
import { buildGitalyServer, formatAddress } from './server.js';

/** Exit code for a bad configuration (EX_CONFIG). */
const EX_CONFIG = 78;
const SHUTDOWN_GRACE_MS = 10_000;

let config: GitalyConfig;
let supervisor: number | undefined;
try {
  config = loadGitalyConfig(readConfigFile(process.argv), process.env);
  supervisor = supervisorPid(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`mock-gitaly: bad configuration: ${err.message}\n`);
  process.exit(EX_CONFIG);
}

const logger = createLogger('mock-gitaly', config.logLevel);
const gitaly = buildGitalyServer(config, logger);
let port: number;
try {
  ({ port } = await gitaly.start());
} catch (err) {
  logger.fatal({ err }, 'cannot start');
  await gitaly.stop(0);
  process.exit(1);
}
stopOnSignals({ logger, supervisorPid: supervisor, close: () => gitaly.stop(SHUTDOWN_GRACE_MS) });
// Announced only once SIGTERM is handled: whoever waits for this line may signal at once.
logger.info(
  { address: formatAddress(config.listen.host, port), storages: Object.keys(config.storages) },
  'listening',
);

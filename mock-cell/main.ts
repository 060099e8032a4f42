import { ConfigError, readConfigFile } from '../lib/config.js';
import { isAppError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { stopOnSignals } from '../lib/shutdown.js';
import { supervisorPid } from '../lib/supervisor-watch.js';
import { type Prepared, prepare, startCells } from './server.js';

/** `node dist/mock-cell/main.js --config <file.json>`: serves every cell of `listen`. */

const EX_CONFIG = 78;

function loadOrExit(): Prepared & { supervisor: number | undefined } {
  try {
    return { ...prepare(readConfigFile(process.argv), process.env), supervisor: supervisorPid(process.env) };
  } catch (err) {
    if (err instanceof ConfigError || (isAppError(err) && err.code === 'CELL_TOPOLOGY_INVALID')) {
      process.stderr.write(`mock-cell: bad configuration: ${err.message}\n`);
      process.exit(EX_CONFIG);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const { config, model, secrets, supervisor } = loadOrExit();
  const logger = createLogger('mock-cell', config.logLevel);
  const running = await startCells(model, config.listen, { ...secrets, logger });
  stopOnSignals({ logger, supervisorPid: supervisor, close: () => running.close() });
  // Announced only once SIGTERM is handled: whoever waits for this line may signal at once.
  logger.info({ addresses: running.cells }, 'listening');
}

main().catch((err: unknown) => {
  process.stderr.write(`mock-cell: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

import { createLogger } from '../logger.js';

/**
 * Test program: logs `listening`, then on SIGTERM logs two lines and exits 0 at once, as the services
 * do. Used to check that a closed log pipe cannot stop a process from exiting.
 */
const logger = createLogger('log-until-signal');
const keepAlive = setInterval(() => undefined, 60_000);
process.on('SIGTERM', () => {
  logger.info({ signal: 'SIGTERM' }, 'shutting down');
  logger.info('stopped');
  clearInterval(keepAlive);
  process.exit(0);
});
logger.info('listening');

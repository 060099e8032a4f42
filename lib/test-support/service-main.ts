import { ConfigError } from '../config.js';
import { runService } from '../service.js';

/**
 * Test program for `runService`: a service named `svc` whose failure is chosen by `SVC_MODE`
 * (`bad-config`, `bad-topology`, `crash`, `listen-fails`; anything else starts normally).
 */
const mode = process.env.SVC_MODE ?? 'ok';

class TopologyBroken extends Error {}

void runService({
  name: 'svc',
  load: () => {
    if (mode === 'bad-config') throw new ConfigError('port (SVC_PORT) must be a number');
    return { config: { logLevel: 'info' } };
  },
  isBadConfig: (err) => err instanceof TopologyBroken,
  build: (_loaded, logger) => {
    if (mode === 'bad-topology') throw new TopologyBroken('topology: cells[0].name is missing');
    if (mode === 'crash') throw new Error('boom in build');
    // Stands for the listeners that keep a real service running.
    let serving: NodeJS.Timeout | undefined;
    return {
      listen: async () => {
        if (mode === 'listen-fails') throw new Error('listen EADDRINUSE: address already in use 127.0.0.1:9');
        serving = setInterval(() => undefined, 60_000);
        return { address: '127.0.0.1:9', extra: 'x' };
      },
      close: async () => {
        clearInterval(serving);
        logger.info('closed');
      },
      shutdownDetails: () => ({ in_flight: 0 }),
    };
  },
});

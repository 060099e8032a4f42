import { readConfigFile } from '../lib/config.js';
import { formatHostPort } from '../lib/listen-address.js';
import { runService } from '../lib/service.js';
import { journal, worldChannelOpen } from '../lib/world-channel.js';
import { loadGitalyConfig } from './config.js';
import { registerGitalyControls } from './control.js';
import { buildGitalyServer } from './server.js';

/** How long running calls may take to finish on SIGTERM before their git processes are killed. */
const SHUTDOWN_GRACE_MS = 10_000;

/** `node dist/mock-gitaly/main.js --config <file.json>` (+ `GITALY_*` environment overrides). */
void runService({
  name: 'mock-gitaly',
  load: (argv, env) => ({ config: loadGitalyConfig(readConfigFile(argv), env) }),
  build: ({ config }, logger) => {
    const gitaly = buildGitalyServer(config, logger, worldChannelOpen() ? { journal } : {});
    registerGitalyControls(gitaly.world);
    return {
      listen: async () => {
        const { port } = await gitaly.start();
        return { address: formatHostPort(config.listen.host, port), storages: Object.keys(config.storages) };
      },
      close: () => gitaly.stop(SHUTDOWN_GRACE_MS),
    };
  },
});

import { readConfigFile } from '../lib/config.js';
import { runService } from '../lib/service.js';
import { TopologyInvalid } from './errors.js';
import { prepare, type RunningCells, startCells } from './server.js';

/** `node dist/mock-cell/main.js --config <file.json>`: serves every cell of `listen`. */
void runService({
  name: 'mock-cell',
  load: (argv, env) => prepare(readConfigFile(argv), env),
  // An invalid topology file is a bad setting: exit 78 naming what is wrong.
  isBadConfig: TopologyInvalid.is,
  build: ({ config, model, secrets }, logger) => {
    let running: RunningCells | undefined;
    return {
      listen: async () => {
        running = await startCells(
          model,
          config.listen,
          { ...secrets, logger, geoSite: config.geoSite },
          config.topologyService,
        );
        return { addresses: running.cells };
      },
      close: async () => running?.close(),
    };
  },
});

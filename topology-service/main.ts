import { readConfigFile } from '../lib/config.js';
import { runService } from '../lib/service.js';
import { journal, worldChannelOpen } from '../lib/world-channel.js';
import { loadTopologyConfig } from './config.js';
import { registerTopologyControls } from './control.js';
import { buildTopologyService } from './server.js';

/** `node dist/topology-service/main.js --config <file.json>` (+ `TOPOLOGY_*` environment overrides). */
void runService({
  name: 'topology-service',
  load: (argv, env) => ({ config: loadTopologyConfig(readConfigFile(argv), env) }),
  build: ({ config }, logger) => {
    const service = buildTopologyService(config, logger, worldChannelOpen() ? journal : undefined);
    registerTopologyControls(service.core.world);
    return {
      listen: () => service.listen(),
      close: () => service.close(),
      shutdownDetails: () => ({ claims: service.core.store.size }),
    };
  },
});

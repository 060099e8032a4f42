import { readConfigFile } from '../lib/config.js';
import { runService } from '../lib/service.js';
import { journal, worldChannelOpen } from '../lib/world-channel.js';
import { TopologyInvalid } from './errors.js';
import { prepare, type RunningCells, startCells } from './server.js';
import { registerRailsControls } from './world/control.js';
import { RailsWorld } from './world/rails-world.js';

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
        // With a supervisor (a world), every request is journaled and the `rails` control ops answer.
        const world = new RailsWorld(worldChannelOpen() ? journal : undefined);
        running = await startCells(
          model,
          config.listen,
          { ...secrets, logger, geoSite: config.geoSite, world },
          config.topologyService,
        );
        registerRailsControls({
          world,
          model,
          cells: config.listen.map((l) => l.cell),
          claims: running.claims,
          jobTokens: running.jobTokens,
        });
        return { addresses: running.cells };
      },
      close: async () => running?.close(),
    };
  },
});

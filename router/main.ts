import { formatAddress } from '../lib/listen-address.js';
import { runService } from '../lib/service.js';
import { buildRouter } from './app.js';
import { loadRouterConfig } from './config.js';

/** `node dist/router/main.js --config <file.json>` (+ `ROUTER_*` environment overrides). */
void runService({
  name: 'router',
  load: (argv, env) => ({ config: loadRouterConfig(argv, env) }),
  build: async ({ config }, log) => {
    // A bad rules file is a ConfigError from here: exit 78 as well.
    const router = await buildRouter(config, { log });
    return {
      listen: async () => {
        const bound = await router.listen();
        return {
          ssh: formatAddress(bound.ssh),
          http: formatAddress(bound.http),
          metrics: formatAddress(bound.metrics),
          region: config.region,
          cells: config.cells.map((c) => c.name),
        };
      },
      close: () => router.close(),
      shutdownDetails: () => ({ grace_ms: config.shutdownGraceMs }),
    };
  },
});

import type { AddressInfo } from 'node:net';
import { ConfigError } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { stopOnSignals } from '../lib/shutdown.js';
import { supervisorPid } from '../lib/supervisor-watch.js';
import { buildRouter } from './app.js';
import { loadRouterConfig } from './config.js';

/** `node dist/router/main.js --config <file.json>` (+ `ROUTER_*` environment overrides). */
const EX_CONFIG = 78;

function address(a: AddressInfo | undefined): string | undefined {
  return a ? `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` : undefined;
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadRouterConfig>;
  let supervisor: number | undefined;
  try {
    config = loadRouterConfig(process.argv, process.env);
    supervisor = supervisorPid(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`router: invalid configuration: ${err.message}\n`);
      process.exit(EX_CONFIG);
    }
    throw err;
  }
  const log = createLogger('router', config.logLevel);
  let router: Awaited<ReturnType<typeof buildRouter>>;
  try {
    router = await buildRouter(config, { log });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`router: invalid configuration: ${err.message}\n`);
      process.exit(EX_CONFIG);
    }
    throw err;
  }
  const addresses = await router.listen();
  stopOnSignals({
    logger: log,
    supervisorPid: supervisor,
    close: () => router.close(),
    details: () => ({ grace_ms: config.shutdownGraceMs }),
  });
  // Announced only once SIGTERM is handled: whoever waits for this line may signal at once.
  log.info(
    {
      ssh: address(addresses.ssh),
      http: address(addresses.http),
      metrics: address(addresses.metrics),
      region: config.region,
      cells: config.cells.map((c) => c.name),
    },
    'listening',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`router: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});

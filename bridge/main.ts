import { readFileSync } from 'node:fs';
import { ConfigError, readConfigFile } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { readSecretFile } from '../lib/secrets.js';
import { stopOnSignals } from '../lib/shutdown.js';
import { supervisorPid } from '../lib/supervisor-watch.js';
import { type BridgeDeps, buildBridge } from './app.js';
import { type BridgeConfig, loadBridgeConfig } from './config.js';

/** EX_CONFIG from sysexits.h. */
const EXIT_CONFIG = 78;

function readTls(config: Readonly<BridgeConfig>): BridgeDeps['tls'] {
  if (!config.tlsCertFile || !config.tlsKeyFile) return undefined;
  try {
    return { cert: readFileSync(config.tlsCertFile), key: readSecretFile(config.tlsKeyFile, 'TLS key') };
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read TLS certificate or key: ${(err as Error).message}`);
  }
}

function readCaFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`gitalyCaFile: cannot read ${path}: ${(err as Error).message}`);
  }
}

async function main(): Promise<void> {
  let config: Readonly<BridgeConfig>;
  let deps: Omit<BridgeDeps, 'logger'>;
  let supervisor: number | undefined;
  try {
    config = loadBridgeConfig(readConfigFile(process.argv));
    supervisor = supervisorPid(process.env);
    deps = {
      shellSecret: readSecretFile(config.shellSecretFile, 'shell secret'),
      workhorseSecret: readSecretFile(config.workhorseSecretFile, 'workhorse secret'),
      tls: readTls(config),
      ...(config.gitalyCaFile ? { gitalyCa: readCaFile(config.gitalyCaFile) } : {}),
    };
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`bridge: bad configuration: ${err.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw err;
  }
  const logger = createLogger('bridge', config.logLevel);
  const bridge = await buildBridge(config, { ...deps, logger });
  const addresses = await bridge.listen();
  stopOnSignals({
    logger,
    supervisorPid: supervisor,
    close: () => bridge.close(),
    details: () => ({ in_flight: bridge.inFlight, grace_ms: config.shutdownGraceMs }),
  });
  // Announced only once SIGTERM is handled: whoever waits for this line may signal at once.
  logger.info(
    {
      listen: addresses.url,
      metrics: addresses.metricsUrl,
      rails: config.railsUrl,
      tls: deps.tls !== undefined,
    },
    'listening',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bridge: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

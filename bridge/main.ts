import { readFileSync } from 'node:fs';
import { ConfigError, readConfigFile } from '../lib/config.js';
import { readSecretFile } from '../lib/secrets.js';
import { runService } from '../lib/service.js';
import { journal, worldChannelOpen } from '../lib/world-channel.js';
import { type BridgeDeps, buildBridge } from './app.js';
import { type BridgeConfig, loadBridgeConfig } from './config.js';

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

/** The settings and every file they name (secrets, TLS, CA): an unreadable one is a bad setting. */
function load(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const config = loadBridgeConfig(readConfigFile(argv), env);
  const deps: Omit<BridgeDeps, 'logger'> = {
    shellSecret: readSecretFile(config.shellSecretFile, 'shell secret'),
    workhorseSecret: readSecretFile(config.workhorseSecretFile, 'workhorse secret'),
    tls: readTls(config),
    ...(config.gitalyCaFile ? { gitalyCa: readCaFile(config.gitalyCaFile) } : {}),
  };
  return { config, deps };
}

/** `node dist/bridge/main.js --config <file.json>` (+ `BRIDGE_*` environment overrides). */
void runService({
  name: 'bridge',
  load,
  build: async ({ config, deps }, logger) => {
    // Without a supervisor's channel nothing would receive the entries: none are built.
    const bridge = await buildBridge(config, { ...deps, logger, ...(worldChannelOpen() ? { journal } : {}) });
    return {
      // `listen` and `metrics` are what the stack's supervisor checks against its plan.
      listen: async () => {
        const addresses = await bridge.listen();
        return {
          listen: addresses.url,
          metrics: addresses.metricsUrl,
          shell: addresses.shellUrl,
          rails: config.railsUrl,
          tls: deps.tls !== undefined,
        };
      },
      close: () => bridge.close(),
      shutdownDetails: () => ({ in_flight: bridge.inFlight, grace_ms: config.shutdownGraceMs }),
    };
  },
});

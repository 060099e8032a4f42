/**
 * @file `node dist/edge/main.js --config <file.json>`: the world's edge as one supervised service.
 * It tests the generated config, runs Debian's nginx or HAProxy in the foreground, logs `listening`
 * with every address once the proxy itself holds them, relays the proxy's output to its log, exits
 * (for the supervisor to start it again) when the proxy dies, and stops the proxy when stopped.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfigFile } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { runService } from '../lib/service.js';
import { loadEdgeSettings } from './config.js';
import { errorLogTail, type ProxyProcess, startProxy, testProxyConfig } from './proxy-process.js';

/** What the proxy printed, one log line each; an address it could not bind as the supervisor reads it. */
function relay(proxy: ProxyProcess, logger: Logger): void {
  for (const stream of [proxy.child.stdout, proxy.child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter(Boolean)) {
        logger.info({ proxy_output: line }, 'proxy');
        const taken =
          /(?:bind\(\) to |for \[)(\S+?:\d+)\]? failed \(98|Address already in use\) for \[(\S+:\d+)\]/.exec(
            line,
          );
        const address = taken?.[1] ?? taken?.[2];
        if (address) process.stderr.write(`EADDRINUSE: address already in use ${address}\n`);
      }
    });
  }
}

void runService({
  name: 'edge',
  load: (argv, env) => ({ config: loadEdgeSettings(readConfigFile(argv), env) }),
  build: ({ config }, logger) => {
    let proxy: ProxyProcess | undefined;
    let closing = false;
    return {
      listen: async () => {
        testProxyConfig(config.proxy, config.dir, config.configFile);
        proxy = startProxy(config.proxy, config.dir, config.configFile, config.listen);
        relay(proxy, logger);
        try {
          await proxy.ready(20_000);
        } catch (err) {
          const tail = errorLogTail(config.dir);
          if (/Address already in use/.test(tail)) relayTaken(tail);
          throw new Error(`${(err as Error).message}${tail ? `\n${tail}` : ''}`);
        }
        // stack.json `edge.pid` (`stack/edge-plan.ts`).
        writeFileSync(join(config.dir, 'proxy.pid'), `${proxy.child.pid}\n`);
        proxy.child.once('exit', (code, signal) => {
          if (closing) return;
          logger.error({ code, signal, error_log: errorLogTail(config.dir) }, 'the proxy exited');
          process.exit(1);
        });
        return {
          proxy: config.proxy,
          proxyPid: proxy.child.pid,
          addresses: config.listen,
          configFile: config.configFile,
        };
      },
      close: async () => {
        closing = true;
        await proxy?.stop();
        rmSync(join(config.dir, 'proxy.pid'), { force: true });
      },
    };
  },
});

/** nginx writes a bind failure to its error log: told on stderr as the supervisor reads it. */
function relayTaken(tail: string): void {
  const address = /bind\(\) to (\S+:\d+) failed/.exec(tail)?.[1];
  if (address) process.stderr.write(`EADDRINUSE: address already in use ${address}\n`);
}

/**
 * @file A bare edge: the generated config of an edge kind or file (`figures.ts`) run by Debian's
 * nginx or HAProxy in front of upstreams of your own, with no world around it. What the edge's own
 * tests use (`edge/test/`), and what a router developer can put in front of any cell.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EdgeFigures } from './figures.js';
import { haproxyEdgeConfig } from './haproxy-config.js';
import { nginxEdgeConfig } from './nginx-config.js';
import { makeNginxTempDirs } from './nginx-files.js';
import { startProxy, testProxyConfig } from './proxy-process.js';
import type { EdgeRoute } from './routes.js';

export interface BareEdge {
  /** The proxy's process id. */
  pid: number;
  configFile: string;
  stop(): Promise<void>;
}

/** Writes the config under `dir`, tests it, starts the proxy; resolves once it listens on every route. */
export async function startBareEdge(
  dir: string,
  figures: EdgeFigures,
  routes: readonly EdgeRoute[],
): Promise<BareEdge> {
  await mkdir(dir, { recursive: true });
  const nginx = figures.proxy === 'nginx';
  const configFile = join(dir, nginx ? 'nginx.conf' : 'haproxy.cfg');
  if (nginx) await makeNginxTempDirs(dir);
  await writeFile(
    configFile,
    nginx ? nginxEdgeConfig({ dir, figures, routes }) : haproxyEdgeConfig({ figures, routes }),
  );
  testProxyConfig(figures.proxy, dir, configFile);
  const proxy = startProxy(
    figures.proxy,
    dir,
    configFile,
    routes.map((r) => r.listen),
  );
  try {
    await proxy.ready(20_000);
  } catch (err) {
    await proxy.stop();
    throw err;
  }
  return { pid: proxy.child.pid as number, configFile, stop: () => proxy.stop() };
}

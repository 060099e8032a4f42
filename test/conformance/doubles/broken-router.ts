/**
 * @file The broken router double (README "Conformance", "Every check can fail"): our topology router
 * (`buildRouter`) set up as the world's own (`<world>/config/router-topology.json`) but with ONE
 * GitLab behaviour broken (`breakages.ts`), by a setting or by a man in the middle on its leg to the
 * cells (`cell-leg.ts`) and to the Topology Service (`ts-leg.ts`). Its own process, every listener
 * on port 0, compiled from the sources by the test (`test/helpers/programs.ts`):
 *
 *   node <compiled>/test/conformance/doubles/broken-router.js --world <data dir> --break <name>
 *
 * logs `listening` with `ssh` (`host:port`) and `http` (URL) once it serves; SIGTERM stops it and
 * removes its folder. A name it does not have exits 78 naming those it has.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../../../lib/config.js';
import type { StackJson } from '../../../lib/contracts/stack.js';
import { formatAddress } from '../../../lib/listen-address.js';
import type { Logger } from '../../../lib/logger.js';
import { runService } from '../../../lib/service.js';
import { buildRouter } from '../../../router/app.js';
import { loadRouterConfig } from '../../../router/config.js';
import { BREAKAGES, type Breakage } from './breakages.js';
import { startCellLeg } from './cell-leg.js';
import { startTsLeg } from './ts-leg.js';

interface Loaded {
  config: { logLevel: string };
  world: string;
  name: string;
  breakage: Breakage;
}

function load(argv: readonly string[]): Loaded {
  const { values } = parseArgs({
    args: argv.slice(2),
    options: { world: { type: 'string' }, break: { type: 'string' } },
  });
  const name = values.break ?? '';
  const breakage = BREAKAGES[name];
  if (!values.world) throw new ConfigError('--world <data dir of a running world> is required');
  if (!breakage)
    throw new ConfigError(`unknown --break ${name} (there are ${Object.keys(BREAKAGES).join(', ')})`);
  return { config: { logLevel: 'info' }, world: values.world, name, breakage };
}

async function build({ world, name, breakage }: Loaded, log: Logger) {
  const stack = JSON.parse(readFileSync(join(world, 'stack.json'), 'utf8')) as StackJson;
  const base = JSON.parse(readFileSync(join(world, 'config', 'router-topology.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const dir = mkdtempSync(join(tmpdir(), `broken-router-${name}-`));
  const ctx = { stack, dir };
  const cellLeg = await startCellLeg(stack, breakage.cell?.(ctx) ?? {});
  const tsLeg = await startTsLeg(stack.topologyService.grpc, breakage.topology?.(ctx) ?? {});
  const ours = {
    ...base,
    sshListen: '127.0.0.1:0',
    httpListen: '127.0.0.1:0',
    metricsListen: undefined,
    cells: (base.cells as Array<{ name: string }>).map((c) => ({ ...c, url: cellLeg.urls[c.name] })),
    topologyServiceAddress: tsLeg.address,
    cellEndpointPort: cellLeg.port,
  };
  const file = join(dir, 'router.json');
  writeFileSync(file, JSON.stringify(breakage.settings ? breakage.settings(ctx, ours) : ours));
  const release = async () => {
    await Promise.all([cellLeg.close(), tsLeg.close()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const router = await buildRouter(loadRouterConfig(['node', 'double', '--config', file], {}), {
      log: log.child({ breakage: name }),
    });
    return {
      listen: async () => {
        const bound = await router.listen();
        return { breakage: name, ssh: formatAddress(bound.ssh), http: `http://${formatAddress(bound.http)}` };
      },
      close: async () => {
        await router.close();
        await release();
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

void runService({ name: 'broken-router', load: (argv) => load(argv), build });

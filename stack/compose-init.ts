import { mkdir, writeFile } from 'node:fs/promises';
import { ensureDemoRepositories, ensureDemoSecretsAndKeys } from './demo-data.js';
import { demoTopology } from './demo-topology.js';
import { COMPOSE_NET, DEMO_CELLS, stackPaths, stackPorts } from './layout.js';
import { planServices } from './stack-config.js';

/**
 * The `init` service of compose.yaml: writes demo data and one config file per container into
 * STACK_DATA_DIR (a volume shared by all containers), with services reaching each other by their
 * compose names. Unlike `npm start`, each cell gets its own mock-cell container.
 */
export async function composeInit(dataDir: string): Promise<string[]> {
  const paths = stackPaths(dataDir);
  const ports = stackPorts(0);
  await mkdir(paths.configDir, { recursive: true });
  const publicKeys = await ensureDemoSecretsAndKeys(paths);
  const topology = demoTopology(ports, paths, publicKeys, COMPOSE_NET);
  await writeFile(paths.topology, `${JSON.stringify(topology, null, 2)}\n`);
  await ensureDemoRepositories(topology);
  const written: string[] = [];
  for (const planned of planServices(paths, ports, COMPOSE_NET, 'info')) {
    if (planned.spec.service !== 'mock-cell') {
      await writeFile(planned.spec.configFile, `${JSON.stringify(planned.config, null, 2)}\n`);
      written.push(planned.spec.configFile);
      continue;
    }
    for (const cell of DEMO_CELLS) {
      const listen = (planned.config.listen as Array<{ cell: string }>).filter((l) => l.cell === cell.name);
      const file = `${paths.configDir}/mock-cell-${cell.name}.json`;
      await writeFile(file, `${JSON.stringify({ ...planned.config, listen }, null, 2)}\n`);
      written.push(file);
    }
  }
  return written;
}

if (process.argv[1]?.endsWith('compose-init.js')) {
  composeInit(process.env.STACK_DATA_DIR ?? '/data').then(
    (files) => process.stdout.write(`compose init wrote ${files.length} config files\n`),
    (err: unknown) => {
      process.stderr.write(`compose init failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

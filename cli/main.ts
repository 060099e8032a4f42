#!/usr/bin/env node
/**
 * @file `gitlab-cells-ssh` (package.json `bin`): `up`, `down`, `status`, `journal`, `control`. See
 * `cli/usage.ts` for each command's help and README "Use as a test fixture".
 */
import { parseArgs } from 'node:util';
import { ControlError } from '../fixture/control-client.js';
import { control, down, journal, status } from './commands.js';
import { conformance } from './conformance.js';
import { up } from './up.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, HELP, UsageError } from './usage.js';
import { dataDirOf } from './world-files.js';

type Flags = Record<string, string | boolean | undefined>;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  'data-dir': { type: 'string' },
  topology: { type: 'string' },
  'port-offset': { type: 'string' },
  'tunnel-profile': { type: 'string' },
  'free-ports': { type: 'boolean' },
  detach: { type: 'boolean' },
  edge: { type: 'string' },
  'edge-time-scale': { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  cell: { type: 'string' },
  service: { type: 'string' },
  since: { type: 'string' },
  endpoint: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** `conformance` takes `--json F` (a file), unlike `journal --json`. */
const CONFORMANCE_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  'data-dir': { type: 'string' },
  ssh: { type: 'string' },
  http: { type: 'string' },
  world: { type: 'string' },
  only: { type: 'string' },
  json: { type: 'string' },
  profile: { type: 'string' },
  edge: { type: 'string' },
  'edge-time-scale': { type: 'string' },
  long: { type: 'boolean' },
  routes: { type: 'string' },
} as const;

/** Which options each command takes (besides --help and --data-dir). */
const ALLOWED: Record<string, string[]> = {
  up: ['topology', 'port-offset', 'free-ports', 'detach', 'edge', 'edge-time-scale', 'tunnel-profile'],
  down: [],
  status: [],
  journal: ['follow', 'cell', 'service', 'since', 'endpoint', 'json'],
  control: [],
  conformance: [
    'ssh',
    'http',
    'world',
    'only',
    'json',
    'profile',
    'edge',
    'edge-time-scale',
    'long',
    'routes',
  ],
};

const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);

function since(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError('--since must be a seq (a non-negative integer)', 'journal');
  return Number(raw);
}

async function run(command: string, flags: Flags, words: string[]): Promise<number> {
  const dataDir = dataDirOf(str(flags['data-dir']));
  if (command !== 'control' && words.length > 0)
    throw new UsageError(`unexpected argument ${words[0]}`, command);
  switch (command) {
    case 'up':
      return up({
        ...(str(flags.topology) ? { topology: str(flags.topology) } : {}),
        dataDir,
        ...(str(flags['port-offset']) !== undefined ? { portOffset: str(flags['port-offset']) } : {}),
        freePorts: flags['free-ports'] === true,
        detach: flags.detach === true,
        ...(str(flags.edge) !== undefined ? { edge: str(flags.edge) } : {}),
        ...(str(flags['edge-time-scale']) !== undefined
          ? { edgeTimeScale: str(flags['edge-time-scale']) }
          : {}),
        ...(str(flags['tunnel-profile']) !== undefined
          ? { tunnelProfile: str(flags['tunnel-profile']) }
          : {}),
      });
    case 'down':
      return down(dataDir);
    case 'status':
      return status(dataDir);
    case 'journal': {
      const query = {
        cell: str(flags.cell),
        service: str(flags.service),
        since: since(str(flags.since)),
        endpoint: str(flags.endpoint),
      };
      return journal(dataDir, query, flags.follow === true, flags.json === true);
    }
    case 'conformance':
      return conformance({
        ssh: str(flags.ssh),
        http: str(flags.http),
        world: str(flags.world),
        only: str(flags.only),
        json: str(flags.json),
        profile: str(flags.profile),
        edge: str(flags.edge),
        edgeTimeScale: str(flags['edge-time-scale']),
        long: flags.long === true,
        routes: str(flags.routes),
      });
    default:
      return control(dataDir, words);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP.main as string);
    return command === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const allowed = ALLOWED[command];
  if (!allowed) throw new UsageError(`unknown command ${command}`);
  const parse = { args: rest, allowPositionals: true, strict: true } as const;
  const { values, positionals } =
    command === 'conformance'
      ? parseArgs({ ...parse, options: CONFORMANCE_OPTIONS })
      : parseArgs({ ...parse, options: OPTIONS });
  if (values.help) {
    process.stdout.write(HELP[command] as string);
    return EXIT_OK;
  }
  const stray = Object.keys(values).filter((k) => k !== 'data-dir' && !allowed.includes(k));
  if (stray.length > 0) throw new UsageError(`${command} takes no --${stray[0]}`, command);
  return run(command, values, positionals);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      const command = err instanceof UsageError ? err.command : undefined;
      process.stderr.write(`gitlab-cells-ssh: ${(err as Error).message}\n\n${HELP[command ?? 'main']}`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    const prefix = err instanceof ControlError ? `control API answered ${err.status}` : 'error';
    process.stderr.write(`gitlab-cells-ssh: ${prefix}: ${(err as Error).message}\n`);
    process.exitCode = EXIT_FAILED;
  },
);

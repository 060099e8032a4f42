// `npm run soak -- --minutes N [--workers W]`: runs the soak (test/soak/soak.test.ts) for N minutes
// (default 30) through vitest with its own config; the results land in test/results/.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const env = { ...process.env };
for (let i = 0; i < args.length; i++) {
  const [flag, value] = [args[i], args[i + 1]];
  const name = { '--minutes': 'SOAK_MINUTES', '--workers': 'SOAK_WORKERS' }[flag];
  if (!name || value === undefined || !/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) {
    process.stderr.write(`usage: npm run soak -- [--minutes N] [--workers W] (got ${args.join(' ')})\n`);
    process.exit(64);
  }
  env[name] = value;
  i++;
}
const root = fileURLToPath(new URL('../..', import.meta.url));
const child = spawn(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/soak/vitest.config.ts'],
  {
    cwd: root,
    env,
    stdio: 'inherit',
  },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

/**
 * @file A client whose reader is slow (S12): a `GIT_SSH_COMMAND` that runs OpenSSH and passes its
 * stdout on to git at a fixed rate, so backpressure holds a clone's pack in the pipes and the edge
 * streams it for as long as the kit needs, without a repository of hundreds of MiB. The script is
 * plain JavaScript written into the check's scratch folder (no build output needed).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPT = `// written by the conformance kit (conformance/slow-reader.ts)
import { spawn } from 'node:child_process';
const [rate, cmd, ...args] = process.argv.slice(2);
const perSecond = Number(rate);
const child = spawn(cmd, args, { stdio: ['inherit', 'pipe', 'inherit'] });
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  child.stdout.pause();
  setTimeout(() => child.stdout.resume(), (chunk.length * 1000) / perSecond);
});
child.stdout.on('end', () => process.stdout.end());
process.stdout.on('error', () => child.kill());
child.on('close', (code, signal) => {
  process.exitCode = code ?? (signal ? 255 : 1);
});
`;

/**
 * Writes the wrapper into `dir`; returns the `GIT_SSH_COMMAND` that runs `sshCommand` through it at
 * `bytesPerSecond`.
 */
export function slowSshCommand(dir: string, sshCommand: string, bytesPerSecond: number): string {
  const file = join(dir, 'slow-reader.mjs');
  writeFileSync(file, SCRIPT);
  return `${process.execPath} ${file} ${Math.max(1, Math.round(bytesPerSecond))} ${sshCommand}`;
}

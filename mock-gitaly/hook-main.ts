import { type HookName, runHook } from './hook-run.js';

/**
 * The receive-pack hook program: `node hook-main.js pre-receive|post-receive`, started by the
 * wrappers `hooks.ts` writes into `core.hooksPath`. Spawned per push, so it stays small.
 */
const name = process.argv[2];
if (name !== 'pre-receive' && name !== 'post-receive') {
  process.stderr.write(`mock-gitaly hook: unknown hook ${JSON.stringify(name)}\n`);
  process.exit(1);
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);

process.exitCode = await runHook(name as HookName, {
  stdin: Buffer.concat(chunks).toString('utf8'),
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});

/**
 * @file `down`, `status`, `journal` and `control` of the CLI: each reads `<data>/stack.json` and
 * talks to the world's control API (or signals its stack).
 */

import type { JournalQuery } from '../fixture/control-client.js';
import type { JournalEntry } from '../lib/contracts/world.js';
import { processRunning } from '../lib/supervisor-watch.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './usage.js';
import { clientOf, readStackJson, stackPid } from './world-files.js';

export async function down(dataDir: string): Promise<number> {
  const json = readStackJson(dataDir);
  const pid = stackPid(json);
  if (pid === undefined) throw new Error(`the world in ${dataDir} has no running service`);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (processRunning(pid)) {
    if (Date.now() > deadline) throw new Error(`the stack (pid ${pid}) did not stop within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(`stopped the world in ${dataDir} (stack pid ${pid})\n`);
  return EXIT_OK;
}

export async function status(dataDir: string): Promise<number> {
  const json = readStackJson(dataDir);
  const { targets, lastSeq } = await clientOf(json).targets();
  const alive = Object.entries(json.pids).filter(([, pid]) => processRunning(pid));
  const lines = [
    `world in ${dataDir}: ${alive.length}/${Object.keys(json.pids).length} services running`,
    `router SSH ${json.router.ssh}${json.routerTopology ? `, topology router SSH ${json.routerTopology.ssh}` : ''}`,
    ...json.cells.map(
      (c) =>
        `cell ${c.name}${c.legacy ? ' (legacy)' : ''}: bridge ${c.bridge}, rails ${c.rails}, gitaly ${c.gitaly}`,
    ),
    `Topology Service gRPC ${json.topologyService.grpc}`,
    `control API ${json.control.url} (token ${json.control.tokenFile}); targets ${Object.keys(targets).join(', ')}`,
    `journal ${json.journal}: ${lastSeq} entries`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return alive.length === Object.keys(json.pids).length ? EXIT_OK : EXIT_FAILED;
}

/** One readable line per entry. */
export function journalLine(e: JournalEntry): string {
  const where = [e.cell ?? '-', e.service].join(' ');
  const what = [e.method, e.endpoint].filter(Boolean).join(' ');
  const fault = e.fault ? ` fault=${JSON.stringify(e.fault)}` : '';
  return `#${e.seq} ${e.time} ${where} ${what} → ${e.status} (${e.durationMs} ms, ${e.bytesIn}/${e.bytesOut} B)${fault}`;
}

export async function journal(
  dataDir: string,
  query: JournalQuery,
  follow: boolean,
  json: boolean,
): Promise<number> {
  const client = clientOf(readStackJson(dataDir));
  let since = query.since;
  for (;;) {
    const page = await client.journal({
      ...query,
      ...(since === undefined ? {} : { since }),
      ...(follow ? { wait: 30_000 } : {}),
    });
    for (const e of page.entries) process.stdout.write(`${json ? JSON.stringify(e) : journalLine(e)}\n`);
    since = page.next;
    if (!follow) return EXIT_OK;
  }
}

/** `control <target> [<cell>] <op> [json-args]`. */
export async function control(dataDir: string, words: string[]): Promise<number> {
  const last = words.at(-1);
  const hasArgs = last?.trimStart().startsWith('{') === true;
  const path = hasArgs ? words.slice(0, -1) : words;
  let args: Record<string, unknown> = {};
  if (hasArgs && last !== undefined) {
    try {
      args = JSON.parse(last) as Record<string, unknown>;
    } catch {
      throw new UsageError(`the arguments are not JSON: ${last}`, 'control');
    }
  }
  const client = clientOf(readStackJson(dataDir));
  let result: unknown;
  if (path.length === 1 && path[0] === 'reset') result = await client.reset();
  else if (path.length === 2)
    result = await client.call(path[0] as string, undefined, path[1] as string, args);
  else if (path.length === 3) result = await client.call(path[0] as string, path[1], path[2] as string, args);
  else throw new UsageError('control needs <target> [<cell>] <op> [json-args]', 'control');
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return EXIT_OK;
}

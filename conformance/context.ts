/**
 * @file What a check is given: the world (its stack.json, control API and journal), the router
 * under test (`ssh` host:port, `http` URL) and helpers that run git and ssh as the world's user
 * against that router with no user or system configuration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlClient } from '../fixture/control-client.js';
import { type WorldControl, worldControl } from '../fixture/world-control.js';
import type { StackJson } from '../lib/contracts/stack.js';
import type { JournalEntry } from '../lib/contracts/world.js';
import { type ExecResult, exec } from './exec.js';
import { KIT_USER } from './world-plan.js';

export interface RouterUnderTest {
  /** `host:port` of its SSH front. */
  ssh?: string;
  /** Base URL of its HTTP front (HTTP checks: next slice). */
  http?: string;
  /** True for this project's own topology-mode router (known divergences apply). */
  ours: boolean;
}

export interface CheckContext {
  stack: StackJson;
  control: WorldControl;
  router: RouterUnderTest;
  legacyCell: string;
  /** `git <args>` as the kit's user through the router's SSH front (`env` added to the user's). */
  git(args: string[], env?: Record<string, string>, timeoutMs?: number): Promise<ExecResult>;
  /** The `GIT_SSH_COMMAND` the kit's git runs (OpenSSH as the kit's user, no configuration). */
  sshCommand: string;
  /** `ssh git@<router> <command>` as the kit's user (`input` its stdin, else none). */
  ssh(command: string, env?: Record<string, string>, input?: string): Promise<ExecResult>;
  /** `ssh://git@<router>/<path>`. */
  url(path: string): string;
  /** GitLab's routes snapshot the user gave (`--routes`), for H6. */
  routesSnapshot?: string;
  /** A fresh folder under the kit's scratch folder. */
  scratch(name: string): string;
  cursor(): Promise<number>;
  /** The entries after `since` once the journal has gone quiet (the last service has written). */
  journalSince(since: number): Promise<JournalEntry[]>;
  close(): void;
}

export function checkContext(
  stack: StackJson,
  router: RouterUnderTest,
  routesSnapshot?: string,
): CheckContext {
  const client = new ControlClient(stack.control.url, stack.control.tokenFile);
  const user = stack.users.find((u) => u.username === KIT_USER);
  if (!user?.privateKey) throw new Error(`the world has no user ${KIT_USER} with a private key`);
  const legacy = stack.cells.find((c) => c.legacy);
  if (!legacy) throw new Error('the world has no legacy cell');
  const root = mkdtempSync(join(tmpdir(), 'conformance-'));
  const sshCmd = [
    'ssh -F /dev/null',
    `-i ${user.privateKey}`,
    '-o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR',
    '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null',
  ].join(' ');
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_SSH_COMMAND: sshCmd,
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    ...extra,
  });
  const [host, port] = splitHostPort(router.ssh);
  let n = 0;
  return {
    stack,
    control: worldControl(client),
    router,
    legacyCell: legacy.name,
    git: (args, extra, timeoutMs) => exec('git', args, env(extra), timeoutMs),
    sshCommand: sshCmd,
    ssh: (command, extra, input) =>
      exec('sh', ['-c', `${sshCmd} -p ${port} git@${host} "$0"`, command], env(extra), 60_000, input),
    url: (path) => `ssh://git@${router.ssh}/${path}`,
    ...(routesSnapshot === undefined ? {} : { routesSnapshot }),
    scratch: (name) => join(root, `${++n}-${name}`),
    cursor: async () => (await client.targets()).lastSeq,
    journalSince: (since) => quietJournal(client, since),
    close: () => rmSync(root, { recursive: true, force: true }),
  };
}

function splitHostPort(ssh: string | undefined): [string, string] {
  const m = /^(.*):(\d+)$/.exec(ssh ?? '');
  return m ? [m[1] as string, m[2] as string] : [ssh ?? '', '22'];
}

/** Reads until no new entry came for 300 ms (entries arrive over IPC after the client exits). */
async function quietJournal(client: ControlClient, since: number): Promise<JournalEntry[]> {
  const seen: JournalEntry[] = [];
  let next = since;
  const deadline = Date.now() + 5_000;
  for (;;) {
    const page = await client.journal({ since: next, wait: 300 });
    if (page.entries.length === 0 || Date.now() > deadline) return seen;
    seen.push(...page.entries);
    next = page.next;
  }
}

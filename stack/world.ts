/**
 * @file The world half of `dist/stack/main.js`: the journal (`<data>/journal.ndjson`), the
 * supervisor's end of every child's world channel, and the control API on loopback (a port the OS
 * picks, its bearer token in `<data>/secrets/control_token`), listed in stack.json as `control` and
 * `journal`.
 */
import { join } from 'node:path';
import type { StackJson } from '../lib/contracts/stack.js';
import { buildControlServer, listenControlServer } from './control-server.js';
import { createControlToken } from './control-token.js';
import { JournalStore } from './journal-store.js';
import { WorldRouter } from './world-router.js';

export interface OpenWorld {
  /** Give this to the supervisor: every child it spawns is attached to the world channel. */
  router: WorldRouter;
  journal: JournalStore;
  /** The stack.json fields of the world. */
  contract: Pick<StackJson, 'control' | 'journal'>;
  close(): Promise<void>;
}

/** Opens the journal and starts the control API of the stack whose data folder is `root`. */
export async function openWorld(root: string, port = 0): Promise<OpenWorld> {
  const journal = new JournalStore(join(root, 'journal.ndjson'));
  const router = new WorldRouter((draft) => journal.append(draft));
  const tokenFile = join(root, 'secrets', 'control_token');
  const token = await createControlToken(tokenFile);
  const server = buildControlServer({ token, journal, router });
  const url = await listenControlServer(server, '127.0.0.1', port);
  return {
    router,
    journal,
    contract: { control: { url, tokenFile }, journal: journal.file },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await journal.close();
    },
  };
}

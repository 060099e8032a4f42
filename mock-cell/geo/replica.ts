import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../lib/logger.js';
import type { TopologyModel } from '../topology.js';
import type { TopologyProject } from '../topology-types.js';
import { fetchFromPrimary, type RefMap, readRefs, sameRefs } from './fetch.js';
import type { GeoRole } from './site.js';
import { signGeoToken } from './token.js';

/**
 * A secondary's replicas. The primary notifies the secondary after every push with the repository's
 * refs (`notify.ts`); the secondary remembers them as what the replica should have and fetches from
 * the primary at once (`fetch.ts`), retrying a few times. A replica is "behind" while its own refs
 * differ from the last refs the primary announced; with no announcement it counts as current (the
 * stack seeds replicas from the primary before it starts). `paused` (a test switch) holds fetches.
 * A replica still behind after its tries (the primary was down) is tried again every
 * `CATCH_UP_INTERVAL_MS`, so it follows within a bounded time once the primary is back.
 */
export const SYNC_ATTEMPTS = 5;
export const SYNC_RETRY_MS = 300;
export const CATCH_UP_INTERVAL_MS = 10_000;

export class Replicas {
  readonly #expected = new Map<number, RefMap>();
  readonly #running = new Map<number, Promise<void>>();
  #again = new Set<number>();
  #paused = false;
  readonly #catchUp: NodeJS.Timeout;

  constructor(
    private readonly model: TopologyModel,
    private readonly geo: GeoRole,
    private readonly log: Logger,
    catchUpIntervalMs = CATCH_UP_INTERVAL_MS,
  ) {
    this.#catchUp = setInterval(() => void this.#syncBehind(), catchUpIntervalMs);
    this.#catchUp.unref();
  }

  /** Stops the catch-up timer (the app is closing). */
  close(): void {
    clearInterval(this.#catchUp);
  }

  async #syncBehind(): Promise<void> {
    if (this.#paused) return;
    for (const id of this.#expected.keys()) {
      const project = this.model.projectById(id);
      if (project && !this.#running.has(id) && (await this.behind(project))) void this.sync(project);
    }
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Stops (true) or resumes (false) replication; resuming syncs every replica that is behind. */
  setPaused(paused: boolean): void {
    this.#paused = paused;
    if (paused) return;
    for (const id of this.#expected.keys()) {
      const project = this.model.projectById(id);
      if (project) this.sync(project);
    }
  }

  /** The replica differs from the refs the primary last announced. */
  async behind(project: TopologyProject): Promise<boolean> {
    const want = this.#expected.get(project.id);
    const dir = this.model.repositoryDir(project);
    if (!want || !dir) return false;
    try {
      return !sameRefs(want, await readRefs(dir));
    } catch (err) {
      this.log.warn({ err, project: this.model.fullPath(project) }, 'geo: cannot read replica refs');
      return true;
    }
  }

  /** The primary's announcement after a push: remember its refs and fetch. */
  notify(project: TopologyProject, refs: RefMap): void {
    this.#expected.set(project.id, refs);
    this.sync(project);
  }

  /** Starts (or queues once more) a sync of the project; resolves when that sync is done. */
  sync(project: TopologyProject): Promise<void> {
    const running = this.#running.get(project.id);
    if (running) {
      this.#again.add(project.id);
      return running;
    }
    const job = this.#syncLoop(project).finally(() => {
      this.#running.delete(project.id);
      if (this.#again.delete(project.id)) this.sync(project);
    });
    this.#running.set(project.id, job);
    return job;
  }

  async #syncLoop(project: TopologyProject): Promise<void> {
    const path = this.model.fullPath(project);
    const dir = this.model.repositoryDir(project);
    if (!dir) return;
    for (let attempt = 1; attempt <= SYNC_ATTEMPTS && !this.#paused; attempt++) {
      try {
        const token = await signGeoToken(this.geo.selfKey, { scope: path });
        await fetchFromPrimary(dir, `${this.geo.primary.url.replace(/\/+$/, '')}/${path}.git`, token);
        if (!(await this.behind(project))) {
          this.log.info({ project: path, attempt }, 'geo: replica is current');
          return;
        }
      } catch (err) {
        this.log.warn({ err, project: path, attempt }, 'geo: replication fetch failed');
      }
      await sleep(SYNC_RETRY_MS * attempt);
    }
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../lib/logger.js';
import type { TopologyModel } from '../topology.js';
import type { TopologyProject } from '../topology-types.js';
import { type RefMap, readRefs } from './fetch.js';
import type { GeoRole } from './site.js';
import { signGeoToken } from './token.js';

/**
 * The primary's side of replication: after a push (`/post_receive`), every secondary of the cell
 * is told the repository's refs (`POST <secondary>/api/v4/geo/repository_updated`, GL-Geo signed
 * by the primary, scope the project path), a few tries each. GitLab's primary writes a Geo event
 * that the secondary's log cursor picks up; a direct notification gives the same "the secondary
 * learns of the push at once" without an event log.
 */
export const GEO_UPDATED_PATH = '/api/v4/geo/repository_updated';
export const NOTIFY_ATTEMPTS = 3;
export const NOTIFY_TIMEOUT_MS = 5_000;

export interface RepositoryUpdatedJson {
  project: string;
  refs: RefMap;
}

async function post(url: string, authorization: string, body: RepositoryUpdatedJson): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(NOTIFY_TIMEOUT_MS),
  });
  await res.arrayBuffer();
  return res.status;
}

export async function notifySecondaries(
  role: GeoRole,
  model: TopologyModel,
  project: TopologyProject,
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  if (role.self.role !== 'primary' || role.secondaries.length === 0) return;
  const dir = model.repositoryDir(project);
  if (!dir) return;
  const body = { project: model.fullPath(project), refs: await readRefs(dir) };
  await Promise.all(
    role.secondaries.map(async (site) => {
      const url = `${site.url.replace(/\/+$/, '')}${GEO_UPDATED_PATH}`;
      for (let attempt = 1; attempt <= NOTIFY_ATTEMPTS; attempt++) {
        try {
          const status = await post(url, await signGeoToken(role.selfKey, { scope: body.project }), body);
          if (status === 200) return;
          log.warn({ site: site.name, status, attempt }, 'geo: secondary refused the update notice');
        } catch (err) {
          log.warn({ site: site.name, err, attempt }, 'geo: secondary unreachable for the update notice');
        }
        await sleep(300 * attempt);
      }
    }),
  );
}

/**
 * @file The custom action of a `300` from `/allowed` (gitlab-shell `accessverifier.CustomPayload`):
 * on a Geo secondary, `geo_proxy_to_primary` with the primary's repository URL (`primary_repo`), the
 * headers to send there (`request_headers`, the `Authorization: GL-Geo …` token) and the switches
 * that say the primary takes the SSH stream directly (`geo_proxy_{fetch,push}_ssh_direct_to_primary`).
 */
import type { CustomActionJson } from '../../lib/contracts/internal-api.js';
import { asObject } from '../../lib/contracts/unchecked.js';
import { RouterError } from '../errors.js';

export interface GeoCustomAction {
  /** `payload.action`, e.g. `geo_proxy_to_primary` (gitlab-shell does not branch on it either). */
  action: string;
  /** `<primary internal URL>/<project>.git`: the tunnel requests go to `<primary_repo>/ssh-*-pack`. */
  primaryRepo: URL;
  requestHeaders: Record<string, string>;
  fetchSshDirect: boolean;
  pushSshDirect: boolean;
}

type PayloadJson = CustomActionJson['payload'];

/** Checks the `payload` of a `300` answer field by field. */
export function parseCustomAction(payload: unknown): GeoCustomAction {
  const p = asObject<PayloadJson>(payload);
  const data = asObject<PayloadJson['data']>(p?.data);
  if (!p || !data) throw RouterError.internalApi('allowed answered 300 without a custom action payload');
  let primaryRepo: URL | undefined;
  try {
    primaryRepo = typeof data.primary_repo === 'string' ? new URL(data.primary_repo) : undefined;
  } catch {
    primaryRepo = undefined;
  }
  if (!primaryRepo || !/^https?:$/.test(primaryRepo.protocol)) {
    throw RouterError.internalApi(
      `allowed answered a custom action with primary_repo ${JSON.stringify(data.primary_repo)}, not an http(s) URL`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(asObject<Record<string, unknown>>(data.request_headers) ?? {})) {
    if (typeof v === 'string') headers[k] = v;
  }
  return {
    action: typeof p.action === 'string' ? p.action : '',
    primaryRepo,
    requestHeaders: headers,
    fetchSshDirect: data.geo_proxy_fetch_ssh_direct_to_primary === true,
    pushSshDirect: data.geo_proxy_push_ssh_direct_to_primary === true,
  };
}

import type { PackfileNegotiationStatistics__Output } from '../../lib/generated/gitaly/PackfileNegotiationStatistics.js';
import { type JwtKey, signWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import type { Logger } from '../../lib/logger.js';
import { BRIDGE_VERSION } from '../config.js';
import type { PreauthResponse } from '../preauth.js';

/**
 * Workhorse's git audit event: when Rails' answer said `NeedAudit`, after the RPC it POSTs
 * `/api/v4/internal/shellhorse/git_audit_event` with its JWT; a non-200 answer is only logged
 * (smart-http.md §3.5). An upload-pack's event carries Gitaly's negotiation statistics as
 * `packfile_stats`, shaped as Go's `encoding/json` writes the protobuf struct (Workhorse's
 * `GitAuditEventRequest`): int64 fields as numbers, zero values and empty lists left out.
 */

/** `PackfileNegotiationStatistics` as Workhorse's JSON has it (`omitempty` on every field). */
export function packfileStatsJson(stats: PackfileNegotiationStatistics__Output): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['payload_size', 'packets'] as const)
    if (Number(stats[key] ?? 0)) out[key] = Number(stats[key]);
  if (stats.caps?.length) out.caps = stats.caps;
  for (const key of ['wants', 'haves', 'shallows'] as const)
    if (Number(stats[key] ?? 0)) out[key] = Number(stats[key]);
  if (stats.deepen) out.deepen = stats.deepen;
  if (stats.filter) out.filter = stats.filter;
  return out;
}

export interface AuditDeps {
  railsUrl: string;
  workhorseKey: JwtKey;
  timeoutMs: number;
  logger: Logger;
}

export async function sendGitAuditEvent(
  deps: AuditDeps,
  action: 'git-upload-pack' | 'git-receive-pack',
  auth: PreauthResponse,
  correlationId: string,
  stats?: PackfileNegotiationStatistics__Output,
): Promise<void> {
  if (!auth.NeedAudit) return;
  const body = {
    action,
    protocol: 'http',
    gl_repository: auth.GL_REPOSITORY,
    username: auth.GL_USERNAME,
    ...(stats ? { packfile_stats: packfileStatsJson(stats) } : {}),
    changes: '_any',
  };
  try {
    const res = await fetch(`${deps.railsUrl}/api/v4/internal/shellhorse/git_audit_event`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'GitLab-Workhorse',
        'gitlab-workhorse': BRIDGE_VERSION,
        [WORKHORSE_HEADER]: await signWorkhorseJwt(deps.workhorseKey),
        'x-request-id': correlationId,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await res.arrayBuffer();
    if (res.status !== 200) deps.logger.warn({ status: res.status, action }, 'git audit event refused');
  } catch (err) {
    deps.logger.warn({ err, action }, 'git audit event failed');
  }
}

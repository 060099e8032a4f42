import { type JwtKey, signWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import type { Logger } from '../../lib/logger.js';
import { BRIDGE_VERSION } from '../config.js';
import type { PreauthResponse } from '../preauth.js';

/**
 * Workhorse's git audit event: when Rails' answer said `NeedAudit`, after the RPC it POSTs
 * `/api/v4/internal/shellhorse/git_audit_event` with its JWT; a non-200 answer is only logged
 * (smart-http.md §3.5).
 */

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
): Promise<void> {
  if (!auth.NeedAudit) return;
  const body = {
    action,
    protocol: 'http',
    gl_repository: auth.GL_REPOSITORY,
    username: auth.GL_USERNAME,
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

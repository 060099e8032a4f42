import { createHash, timingSafeEqual } from 'node:crypto';
import ssh2, { type AuthContext } from 'ssh2';
import { isAppError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { ShellActor } from '../cells/actor.js';
import type { InternalApi, KeyRecord } from '../cells/internal-api.js';
import type { RouterMetrics } from '../metrics.js';
import { authenticateCertificate, type TrustedCas } from './cert-auth.js';
import { CERT_SUFFIX } from './certificate.js';

const { utils } = ssh2;

/**
 * Public-key authentication as gitlab-sshd does it, against the cells' internal API
 * (`authorized_keys?key=<blob>`; keys are shared by every cell). ssh2 asks twice per key: first
 * without a signature ("would this key do?"), then with one, which is verified against the offered
 * key before the connection is accepted. Every other method is refused.
 */
export interface AuthState {
  log: Logger;
  remoteIp: string;
  requestId: string;
  /** Set once a key (or a certificate) was accepted with a valid signature. */
  actor: ShellActor | undefined;
  username: string | undefined;
  /** gitlab-sshd's connection SLI: an authentication was tried; the last try failed on our side. */
  authAttempted: boolean;
  serverError: boolean;
  /** Lookups by key blob, so the two phases cost one internal API call. */
  lookups: Map<string, Promise<KeyRecord | undefined>>;
}

export function authenticate(
  ctx: AuthContext,
  state: AuthState,
  api: InternalApi,
  metrics: RouterMetrics,
  trustedCas: TrustedCas,
): void {
  if (ctx.method !== 'publickey') {
    ctx.reject(['publickey']);
    return;
  }
  state.authAttempted = true;
  if (ctx.key.algo.endsWith(CERT_SUFFIX)) {
    authenticateCertificate(ctx, state, trustedCas, metrics);
    return;
  }
  const blob = ctx.key.data.toString('base64');
  let lookup = state.lookups.get(blob);
  if (!lookup) {
    lookup = api.findKey(blob, { requestId: state.requestId, remoteIp: state.remoteIp, log: state.log });
    state.lookups.set(blob, lookup);
  }
  lookup.then(
    (record) => {
      state.serverError = false;
      if (!record || (record.key !== undefined && !sameKeyBlob(record.key, blob))) {
        metrics.sshAuthFailures++;
        state.log.info({ key_type: ctx.key.algo }, 'public key not known to GitLab');
        ctx.reject(['publickey']);
        return;
      }
      if (!ctx.signature) {
        ctx.accept();
        return;
      }
      if (!ctx.blob || !verifySignature(ctx.key.data, ctx.blob, ctx.signature, ctx.hashAlgo)) {
        metrics.sshAuthFailures++;
        state.log.warn({ key_id: record.id }, 'public key signature did not verify');
        ctx.reject(['publickey']);
        return;
      }
      state.actor = { keyId: String(record.id) };
      state.username = ctx.username;
      ctx.accept();
    },
    (err: unknown) => {
      metrics.sshAuthFailures++;
      state.serverError = isAppError(err) ? err.system : true;
      state.lookups.delete(blob);
      state.log.warn({ err }, 'public key lookup failed');
      ctx.reject(['publickey']);
    },
  );
}

function verifySignature(
  keyData: Buffer,
  blob: Buffer,
  signature: Buffer,
  hashAlgo: string | undefined,
): boolean {
  const parsed = utils.parseKey(keyData);
  if (parsed instanceof Error) return false;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key) return false;
  const result = key.verify(blob, signature, hashAlgo);
  return result === true;
}

/**
 * Compares the key the cell has on file (`ssh-ed25519 AAAA… comment`, or the bare base64 blob) with
 * the offered one, in constant time (hashing first also hides the lengths).
 */
export function sameKeyBlob(stored: string, offeredBase64: string): boolean {
  const parts = stored.trim().split(/\s+/);
  const storedBlob = (parts.length >= 2 ? parts[1] : parts[0]) ?? '';
  const a = createHash('sha256').update(storedBlob).digest();
  const b = createHash('sha256').update(offeredBase64).digest();
  return timingSafeEqual(a, b);
}

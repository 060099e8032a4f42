/**
 * @file Certificate login, as gitlab-sshd's `handleUserCertificate` for a CA of
 * `trusted_user_ca_keys` (instance level): the certificate must pass `certificateProblem` and be
 * signed by a trusted CA; its KeyId is then the GitLab username the session acts for. A certificate
 * of any other CA is refused (gitlab-sshd's group-level `authorized_certs` lookup, behind a feature
 * flag there, is not done).
 */
import { readFileSync } from 'node:fs';
import ssh2, { type AuthContext } from 'ssh2';
import { ConfigError } from '../../lib/config.js';
import type { RouterMetrics } from '../metrics.js';
import type { AuthState } from './auth.js';
import {
  type Certificate,
  certificateProblem,
  fingerprint,
  parseCertificate,
  verifySshSignature,
} from './certificate.js';

const { utils } = ssh2;

/** The trusted CAs' public key blobs, base64. */
export type TrustedCas = ReadonlySet<string>;

/** A GitLab username as gitlab-sshd's `validateKeyID` accepts it: no whitespace, no control bytes. */
const USERNAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}$/;

/** Why this certificate may not log in (undefined: it may, once its key signed the session). */
function refusal(
  cert: Certificate,
  trusted: TrustedCas,
  login: string,
  clientIp: string,
): string | undefined {
  if (!trusted.has(cert.signatureKey.toString('base64'))) return 'not signed by a trusted CA';
  const problem = certificateProblem(cert, login, clientIp);
  if (problem) return problem;
  if (!USERNAME.test(cert.keyId)) return 'KeyId is not a GitLab username';
  return undefined;
}

export function authenticateCertificate(
  ctx: AuthContext & { method: 'publickey' },
  state: AuthState,
  trusted: TrustedCas,
  metrics: RouterMetrics,
): void {
  const refuse = (reason: string, fields: Record<string, unknown> = {}) => {
    metrics.sshAuthFailures++;
    state.log.info({ ...fields, reason, key_type: ctx.key.algo }, 'certificate rejected');
    ctx.reject(['publickey']);
  };
  let cert: Certificate;
  try {
    cert = parseCertificate(ctx.key.data);
  } catch (err) {
    refuse((err as Error).message);
    return;
  }
  const fields = {
    certificate_identity: cert.keyId,
    signing_ca_fingerprint: fingerprint(cert.signatureKey),
    serial: cert.serial.toString(),
  };
  const reason =
    refusal(cert, trusted, ctx.username, state.remoteIp) ??
    (ctx.signature && !(ctx.blob && verifySshSignature(cert.publicKey, ctx.blob, ctx.signature))
      ? 'signature did not verify'
      : undefined);
  if (reason) {
    refuse(reason, fields);
    return;
  }
  if (ctx.signature) {
    state.actor = { username: cert.keyId };
    state.username = ctx.username;
    state.log.info(fields, 'user certificate is signed by a locally trusted CA');
  }
  ctx.accept();
}

/** `trustedUserCaKeys`: OpenSSH public key files, one CA per line (`type base64 [comment]`). */
export function loadTrustedCas(files: readonly string[]): Set<string> {
  const cas = new Set<string>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read the trusted user CA keys ${file}: ${(err as Error).message}`);
    }
    for (const [i, raw] of text.split('\n').entries()) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const blob = line.split(/\s+/)[1] ?? '';
      const parsed = utils.parseKey(Buffer.from(blob, 'base64'));
      if (blob === '' || parsed instanceof Error)
        throw new ConfigError(`${file}:${i + 1} is not an OpenSSH public key line`);
      cas.add(blob);
    }
  }
  return cas;
}

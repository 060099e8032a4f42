/**
 * @file The large clone with each SSH cipher family (issue 25 "Cipher"). OpenSSH's client takes
 * the first cipher of its own list the server offers, ChaCha20-Poly1305, from OpenSSH and from
 * the router alike (both offer it); `-c aes128-gcm@openssh.com` in `GIT_SSH_COMMAND` makes the
 * same client use AES-GCM, which both servers offer too. The AES-GCM rounds of OpenSSH and the
 * cells path run in the same rounds as every other contender's large clone, interleaved.
 */
import {
  type CloneEntry,
  CONTENDER_LABELS,
  contenderEntries,
  type GitContender,
  type GitContenderId,
  type GitWorkloadContext,
  type LargeCloneResult,
  repeatedClones,
} from './git-workloads.js';
import type { Outcome } from './outcome.js';
import { describeFailure, run } from './proc.js';

export const AES_GCM = 'aes128-gcm@openssh.com';
/** The SSH contenders that also clone with AES-GCM. */
export type AesGcmId = 'openssh' | 'cells';
export const AES_GCM_CONTENDERS: readonly AesGcmId[] = ['openssh', 'cells'];
/** Key of an SSH contender's algorithms: as the client picks them, or with `-c aes128-gcm@openssh.com`. */
export type SshVariant = AesGcmId | `${AesGcmId}-aes-gcm`;

/** `c` with `-c <cipher>` added to its ssh command line. */
export function withCipher(c: GitContender, cipher: string): GitContender {
  const command = c.env.GIT_SSH_COMMAND;
  if (c.unavailable || !command) return { ...c, unavailable: c.unavailable ?? `${c.id} does not use ssh` };
  return { ...c, env: { ...c.env, GIT_SSH_COMMAND: `${command} -c ${cipher}` } };
}

/** A readable name of an SSH cipher: `chacha20-poly1305@openssh.com` → ChaCha20-Poly1305. */
export function cipherFamily(cipher: string): string {
  if (cipher.startsWith('chacha20-poly1305')) return 'ChaCha20-Poly1305';
  if (/^aes\d+-gcm/.test(cipher)) return 'AES-GCM';
  if (/^aes\d+-ctr/.test(cipher)) return 'AES-CTR';
  return cipher;
}

export interface LargeClones {
  byContender: Record<GitContenderId, Outcome<LargeCloneResult>>;
  aesGcm: Partial<Record<AesGcmId, Outcome<LargeCloneResult>>>;
}

/** The large clone: every contender as the client picks its cipher, then OpenSSH and the cells path with AES-GCM. */
export async function largeClones(ctx: GitWorkloadContext, runs: number): Promise<LargeClones> {
  const gcm: CloneEntry<`${AesGcmId}-aes-gcm`>[] = [];
  for (const id of AES_GCM_CONTENDERS) {
    const c = ctx.contenders.find((x) => x.id === id);
    if (c)
      gcm.push({
        key: `${id}-aes-gcm`,
        contender: withCipher(c, AES_GCM),
        label: `${CONTENDER_LABELS[id]} (AES-GCM)`,
      });
  }
  const all = await repeatedClones(ctx, runs, 'large', [...contenderEntries(ctx), ...gcm]);
  const byContender = {} as Record<GitContenderId, Outcome<LargeCloneResult>>;
  for (const c of ctx.contenders) byContender[c.id] = all[c.id];
  const aesGcm: LargeClones['aesGcm'] = {};
  for (const id of AES_GCM_CONTENDERS) {
    const o = all[`${id}-aes-gcm`];
    if (o) aesGcm[id] = o;
  }
  return { byContender, aesGcm };
}

export interface SshAlgorithms {
  kex: string;
  cipher: string;
}

/** The key exchange and cipher an `ssh` client negotiates with a server (from `ssh -v`). */
export async function negotiatedAlgorithms(
  sshCommand: string,
  port: number,
  user: string,
  command: string,
): Promise<SshAlgorithms> {
  const args = [...sshCommand.split(' ').slice(1), '-v', '-p', String(port), `${user}@127.0.0.1`, command];
  const r = await run('ssh', args, { timeoutMs: 30_000 });
  const kex = /kex: algorithm: (\S+)/.exec(r.stderr)?.[1];
  const cipher = /kex: server->client cipher: (\S+)/.exec(r.stderr)?.[1];
  if (!kex || !cipher) throw new Error(`cannot tell the negotiated algorithms: ${describeFailure(r)}`);
  return { kex, cipher };
}

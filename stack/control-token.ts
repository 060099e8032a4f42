/**
 * @file The control API's bearer token: random, in `<data>/secrets/control_token` (mode 600), and
 * compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes a fresh token to `file` (mode 600, replacing any old one) and returns it. */
export async function createControlToken(file: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return token;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether an `Authorization` header carries `token` (hashes first, so lengths never leak). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}

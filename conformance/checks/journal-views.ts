/**
 * @file Views of journal entries the checks judge by.
 */
import type { JournalEntry } from '../../lib/contracts/world.js';

export const ALLOWED = '/api/v4/internal/allowed';

export const isClassify = (e: JournalEntry) =>
  e.service === 'topology-service' && e.endpoint.endsWith('/Classify');

export function claimOf(e: JournalEntry): { type: string; value: string } | undefined {
  const claim = e.fields?.claim as { type?: unknown; value?: unknown } | null | undefined;
  return typeof claim?.type === 'string' ? { type: claim.type, value: String(claim.value) } : undefined;
}

export const routeClassify = (entries: JournalEntry[], value: string) =>
  entries.filter((e) => isClassify(e) && claimOf(e)?.type === 'route' && claimOf(e)?.value === value);

/** Rails' `/allowed` entries (which cell saw it, with what status). */
export const allowedOf = (entries: JournalEntry[]) =>
  entries.filter((e) => e.service === 'rails' && e.endpoint === ALLOWED);

export const where = (entries: JournalEntry[]) =>
  entries.map((e) => `${e.cell ?? '-'} ${e.status}`).join(', ') || 'none';

/** The bridges' tunnel entries (`POST …/ssh-upload-pack` or `…/ssh-receive-pack`). */
export const tunnelsOf = (entries: JournalEntry[]) =>
  entries.filter((e) => e.service === 'bridge' && /\/ssh-(upload|receive)-pack$/.test(e.endpoint));

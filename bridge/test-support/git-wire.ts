import { DELIM_PKT, encodePkt, FLUSH_PKT } from '../../lib/pktline.js';

/**
 * Just enough of git's wire protocol to drive a real `git upload-pack` / `receive-pack` by hand
 * through a tunnel: request builders, and predicates over the bytes received so far.
 */

/** Request header asking Gitaly for protocol v2 (upload-pack then opens with its capabilities). */
export const PROTOCOL_V2 = { 'git-protocol': 'version=2' } as const;

/** A v2 `ls-refs` command; each call is one complete request, answered by refs and a flush. */
export function lsRefs(prefixes: readonly string[] = []): Buffer {
  return Buffer.concat([
    encodePkt('command=ls-refs\n'),
    DELIM_PKT,
    ...prefixes.map((p) => encodePkt(`ref-prefix ${p}\n`)),
    FLUSH_PKT,
  ]);
}

/**
 * v0 fetch of one commit: `want`, flush, `done`. Without side-band, upload-pack answers `NAK` and the
 * raw pack on stdout; `no-progress` keeps its progress off stderr (which compatible mode interleaves).
 */
export function wantDone(oid: string): Buffer {
  return Buffer.concat([encodePkt(`want ${oid} no-progress\n`), FLUSH_PKT, encodePkt('done\n')]);
}

/** v0 receive-pack commands (`<old> <new> <ref>`), first with `report-status`; no flush, so git keeps reading. */
export function pushCommands(count: number, newOid: string): Buffer {
  const zero = '0'.repeat(40);
  return Buffer.concat(
    Array.from({ length: count }, (_, i) =>
      encodePkt(`${zero} ${newOid} refs/heads/b${i}${i === 0 ? '\0report-status' : ''}\n`),
    ),
  );
}

/**
 * Walks the pkt-lines at the start of `buf` and counts flush packets, stopping at the first
 * incomplete packet or at bytes that are not pkt-lines (a raw pack after `NAK`).
 */
export function flushCount(buf: Buffer): number {
  let flushes = 0;
  let offset = 0;
  while (buf.length - offset >= 4) {
    const head = buf.toString('latin1', offset, offset + 4);
    if (!/^[0-9a-f]{4}$/.test(head)) break;
    const len = Number.parseInt(head, 16);
    if (len === 0) flushes++;
    if (len < 4) {
      offset += 4;
      continue;
    }
    if (buf.length - offset < len) break;
    offset += len;
  }
  return flushes;
}

/** The object id `refs/heads/main` points at, from a v0 advertisement or a v2 ls-refs answer. */
export function mainOid(buf: Buffer): string | undefined {
  return /([0-9a-f]{40}) refs\/heads\/main[\0\n]/.exec(buf.toString('latin1'))?.[1];
}

/** The raw pack of a v0 fetch answer (everything after `0008NAK\n`), or undefined before it. */
export function packAfterNak(buf: Buffer): Buffer | undefined {
  const at = buf.indexOf('0008NAK\n');
  return at === -1 ? undefined : buf.subarray(at + 8);
}

/**
 * @file One front of the edge: the address a router dials for a cell and the bridge behind it.
 */

export interface EdgeRoute {
  /** The cell's name (names the nginx upstream / HAProxy backend). */
  cell: string;
  /** `host:port` the edge listens on for this cell. */
  listen: string;
  /** `host:port` of the cell's bridge. */
  upstream: string;
}

/** A cell name as a config identifier: letters, digits and `_` only. */
export function configName(cell: string): string {
  return `cell_${cell.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/** The paths of gitlab-shell's tunnel (`POST /<project>.git/ssh-*`), as an extended regular expression. */
export const SSH_PACK_PATH = '/ssh-(upload-pack|receive-pack|upload-archive)$';

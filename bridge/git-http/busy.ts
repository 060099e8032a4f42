/**
 * Workhorse's busy answers (`internal/git/error.go`, `handleLimitErr`): when Gitaly fails a call
 * with a `gitaly.LimitError` detail, git gets a git-level message in the response body instead of
 * a bare 500, so the user reads why. Bytes as smart-http.md §3.5 pins them.
 */

const LOAD = 'GitLab is currently unable to handle this request due to load.\n';

/** upload-pack: one `ERR` pkt-line, which git prints as `remote error: …`. */
export const UPLOAD_PACK_BUSY = Buffer.from(`0047ERR ${LOAD}`, 'latin1');

/**
 * receive-pack: band 1 carries a report-status `unpack server is busy` and its flush (the outer
 * length 0x23 covers both), band 2 the message, then a flush.
 */
export const RECEIVE_PACK_BUSY = Buffer.concat([
  Buffer.from('0023\x01001aunpack server is busy\n0000', 'latin1'),
  Buffer.from(`0044\x02${LOAD}`, 'latin1'),
  Buffer.from('0000', 'latin1'),
]);

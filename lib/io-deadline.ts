/**
 * A deadline for bytes a socket may already hold. Node runs due timers before it polls for I/O, so
 * after the event loop stalled past a deadline a plain timer fires although the bytes came in time.
 * Go's readers (yamux, net.Conn) hand out what their buffer holds before a deadline counts: this one
 * waits one more turn (`setImmediate` runs after the poll phase), so I/O that landed meanwhile wins.
 * Returns the cancel function; the timer does not keep the process alive.
 */
export function ioDeadline(ms: number, onExpired: () => void): () => void {
  let verdict: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    verdict = setImmediate(onExpired);
  }, ms);
  timer.unref();
  return () => {
    clearTimeout(timer);
    clearImmediate(verdict);
  };
}

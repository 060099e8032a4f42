import type { Socket } from 'node:net';

/** How long a connection closed after an answer keeps discarding what its client still sends. */
export const LINGER_MS = 2000;

const lingering = new WeakSet<Socket>();

/**
 * Closes an HTTP/1.1 connection whose request body was not read to its end without losing the
 * answer already written. Closing a socket while the client's bytes still arrive makes the kernel
 * send a reset, and a client that had not read the answer yet gets ECONNRESET/EPIPE instead of the
 * status (Go's HTTP client, gitlab-shell's, is one). So, as Apache's and nginx's lingering close:
 * send FIN, keep reading and discarding until the client closes its side, and end it after `ms`
 * at the most. Calling it again for the same socket does nothing.
 */
export function closeLingering(socket: Socket, ms = LINGER_MS): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.end();
  socket.resume();
}

/**
 * Node's HTTP server ends a `Connection: close` response with `socket.destroySoon()`, which destroys
 * the socket as soon as its FIN is out, unread client bytes or not. Call before ending such a
 * response: that one socket then closes lingering instead.
 */
export function lingerInsteadOfDestroySoon(socket: Socket, ms = LINGER_MS): void {
  socket.destroySoon = () => closeLingering(socket, ms);
}

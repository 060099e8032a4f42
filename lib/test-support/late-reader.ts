import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * An HTTP/1.1 client that POSTs a chunked body without end to `path` on `port` and reads nothing
 * for `pauseMs`, then reads for `readMs`: what a slow-to-read client of a refusal sees (raw bytes).
 */
export async function postEndlessBodyReadingLate(
  port: number,
  { path = '/x', host = '127.0.0.1', pauseMs = 300, readMs = 200 } = {},
): Promise<string> {
  const socket = net.connect(port, host);
  socket.on('error', () => undefined);
  socket.pause();
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
  const chunk = `4000\r\n${'z'.repeat(0x4000)}\r\n`;
  const writer = setInterval(() => socket.writable && socket.write(chunk), 5);
  await sleep(pauseMs);
  let received = '';
  socket.on('data', (c: Buffer) => {
    received += c.toString('latin1');
  });
  socket.resume();
  await sleep(readMs);
  clearInterval(writer);
  socket.destroy();
  return received;
}

import type { Readable } from 'node:stream';

/**
 * Reads a response body into memory, up to `limit` bytes (the rest is discarded and the stream
 * destroyed). Rejects when the stream fails or closes before its end.
 */
export function readBody(body: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      body.off('data', onData);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) {
        chunks.push(chunk.subarray(0, limit - size));
        size = limit;
        finish();
        body.destroy();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    body.on('data', onData);
    body.once('end', () => finish());
    body.once('error', (err) => finish(err));
    body.once('close', () => finish(new Error('body closed before its end')));
  });
}

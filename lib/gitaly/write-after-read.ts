import { randomBytes } from 'node:crypto';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * Workhorse's coupled writer for upload-pack (`newWriteAfterReader`): what Gitaly answers before
 * the client's request body has been read to its end is spooled, and reaches the client only once
 * the body has ended (git's HTTP client and some proxies cannot take an answer while still
 * sending). The spool is memory up to `SPOOL_MEMORY_BYTES`, then an unlinked temporary file, so a
 * big early answer (ACK lines of a long negotiation) never stalls Gitaly — which would stop it
 * reading the body: the deadlock of gitlab-workhorse#92 — and is never held in memory.
 */

export const SPOOL_MEMORY_BYTES = 64 * 1024;
const READ_CHUNK = 64 * 1024;

/** Resolves once `output` can take more (or can take nothing more: closed, errored, aborted). */
function drained(output: Writable, signal: AbortSignal): Promise<void> {
  if (!output.writableNeedDrain || output.destroyed || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      output.off('drain', done);
      output.off('close', done);
      output.off('error', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    output.on('drain', done);
    output.on('close', done);
    output.on('error', done);
    signal.addEventListener('abort', done);
  });
}

export class WriteAfterRead {
  private released = false;
  private memory: Buffer[] = [];
  private memoryBytes = 0;
  private file: FileHandle | undefined;
  private fileBytes = 0;
  /** Bytes that went through the spool (for the request's log line). */
  spooledBytes = 0;
  /** Every write and the release run one after another, in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly output: Writable,
    private readonly signal: AbortSignal,
    private readonly dir = tmpdir(),
  ) {}

  /** Queues `chunk`: spooled before release, written to the output (with backpressure) after. */
  write(chunk: Buffer): Promise<void> {
    this.chain = this.chain.then(() => (this.released ? this.toOutput(chunk) : this.toSpool(chunk)));
    return this.chain;
  }

  /** The body has ended (or the call is over): the spool goes out, later writes go straight through. */
  release(): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.released) return;
      this.released = true;
      await this.flush();
    });
    return this.chain;
  }

  /** Drops a spool that will never be released (the call was cancelled). */
  async discard(): Promise<void> {
    this.memory = [];
    const file = this.file;
    this.file = undefined;
    await file?.close().catch(() => {});
  }

  private async toOutput(chunk: Buffer): Promise<void> {
    if (this.signal.aborted || this.output.destroyed) return;
    this.output.write(chunk);
    await drained(this.output, this.signal);
  }

  private async toSpool(chunk: Buffer): Promise<void> {
    this.spooledBytes += chunk.length;
    if (!this.file && this.memoryBytes + chunk.length <= SPOOL_MEMORY_BYTES) {
      this.memory.push(chunk);
      this.memoryBytes += chunk.length;
      return;
    }
    if (!this.file) {
      const path = join(this.dir, `bridge-upload-pack-spool-${randomBytes(8).toString('hex')}`);
      this.file = await open(path, 'wx+', 0o600);
      // Unlinked at once: the data lives as long as the handle, and nothing is left behind.
      await unlink(path);
    }
    await this.file.write(chunk, 0, chunk.length, this.fileBytes);
    this.fileBytes += chunk.length;
  }

  private async flush(): Promise<void> {
    const memory = this.memory;
    this.memory = [];
    for (const chunk of memory) await this.toOutput(chunk);
    const file = this.file;
    if (!file) return;
    try {
      for (let at = 0; at < this.fileBytes && !this.signal.aborted; ) {
        const { buffer, bytesRead } = await file.read(Buffer.alloc(READ_CHUNK), 0, READ_CHUNK, at);
        if (bytesRead === 0) break;
        await this.toOutput(buffer.subarray(0, bytesRead));
        at += bytesRead;
      }
    } finally {
      this.file = undefined;
      await file.close().catch(() => {});
    }
  }
}

/** Reads `stream` to its end through `coupled`, one chunk at a time (the stream's backpressure). */
export async function relayThrough(
  stream: Readable,
  coupled: WriteAfterRead,
  count: (n: number) => void,
): Promise<void> {
  try {
    for await (const chunk of stream) {
      count((chunk as Buffer).length);
      await coupled.write(chunk as Buffer);
    }
  } catch {
    // A destroyed sidechannel ends the relay; the call's status says why.
  }
}

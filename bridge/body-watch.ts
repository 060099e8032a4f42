/**
 * @file What the journal says of a tunnel's request body (README "Use as a test fixture"): whether
 * it ended while the tunnel was still streaming (`before-exit`) or was still open when the answer
 * ended (`open-at-exit`), and its last bytes — what a judge of gitlab-shell's release profiles needs
 * (a `0000` body, a flush-pkt added after `done`).
 */

const TAIL_BYTES = 16;

export type BodyEnd = 'before-exit' | 'open-at-exit';

export class BodyWatch {
  private tail = Buffer.alloc(0);
  private ended = false;

  /** A chunk of git's stdin (after any body framing). */
  add(chunk: Buffer): void {
    const joined = Buffer.concat([this.tail, chunk.subarray(-TAIL_BYTES)]);
    this.tail = joined.subarray(-TAIL_BYTES);
  }

  /** The body ended while the tunnel was streaming. */
  end(): void {
    this.ended = true;
  }

  get bodyEnd(): BodyEnd {
    return this.ended ? 'before-exit' : 'open-at-exit';
  }

  /** The last bytes as text: printable ASCII and `\n` kept, every other byte a `.`. */
  get stdinTail(): string {
    return [...this.tail]
      .map((b) => (b === 10 || (b >= 32 && b < 127) ? String.fromCharCode(b) : '.'))
      .join('');
  }
}

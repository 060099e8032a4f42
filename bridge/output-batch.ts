import type { OutputKind } from '../lib/gitaly/index.js';
import type { ResponseEncoder } from './response-encoder.js';

/**
 * Git's output as it arrives within one turn of the event loop — the pieces of every socket read
 * from Gitaly in that turn (Node reads 64 KiB at a time; a sideband packet, a yamux frame or a gRPC
 * message each start a new piece) — handed on together once the turn's reads are done
 * (`setImmediate`): every buffer of the batch in one vectored write.
 * Nothing is copied, and nothing waits beyond the current turn.
 */
export class OutputBatch {
  private kinds: OutputKind[] = [];
  private pieces: Buffer[] = [];

  constructor(
    private readonly encoder: ResponseEncoder,
    private readonly write: (chunks: Buffer[]) => void,
  ) {}

  add(kind: OutputKind, data: Buffer): void {
    if (data.length === 0) return;
    if (this.pieces.length === 0) setImmediate(this.flush);
    this.kinds.push(kind);
    this.pieces.push(data);
  }

  /** Writes what is pending now; an end of the tunnel calls this so its last frames follow the output. */
  readonly flush = (): void => {
    const { kinds, pieces } = this;
    if (pieces.length === 0) return;
    this.kinds = [];
    this.pieces = [];
    const chunks: Buffer[] = [];
    for (let i = 0; i < pieces.length; ) {
      const kind = kinds[i] as OutputKind;
      let j = i + 1;
      while (j < pieces.length && kinds[j] === kind) j += 1;
      for (const c of this.encoder.output(kind, i === 0 && j === pieces.length ? pieces : pieces.slice(i, j)))
        chunks.push(c);
      i = j;
    }
    this.write(chunks);
  };

  /** Drops what is pending (the tunnel was aborted). */
  clear(): void {
    this.kinds = [];
    this.pieces = [];
  }
}

/**
 * A history shaped like a real project's, for `git fast-import`: source-like text files added
 * up front, then many small commits that each edit a few of them (lines replaced, inserted,
 * removed) and now and then add a file. Every version of a file differs from the previous one by
 * a few lines, so the pack is made of deltas and delta chains, as in real repositories.
 * Everything comes from the seed's keystream (repo-gen's): the same history on every machine.
 */
export interface HistoryShape {
  /** Commits after the initial one. */
  commits: number;
  /** Files each commit edits. */
  editsPerCommit: number;
  /** Line edits (replace, insert, delete) per edited file, at most. */
  maxLineEdits: number;
}

export interface HistoryInput {
  /** Files of the initial commit. */
  files: number;
  /** Approximate size of each initial file. */
  fileBytes: number;
  history: HistoryShape;
}

/** Identifiers the generated "source" lines are made of (compressible like code, not like noise). */
const WORDS =
  'const let return if else for while function class import export from await async new this value result error count index items buffer stream request response config options state cache token user project cell route bridge router tunnel packet frame window header length offset total limit timeout signal reader writer handler client server session channel'.split(
    ' ',
  );
const KEYWORD_LINES = ['}', '', '  }', '});', '// ---', 'return;'];

/** Deterministic small integers from a keystream, read in blocks. */
class Dice {
  private block: Buffer = Buffer.alloc(0);
  private at = 0;
  constructor(private readonly next: (bytes: number) => Buffer) {}

  /** An integer in [0, n). */
  int(n: number): number {
    if (this.at + 4 > this.block.length) {
      this.block = this.next(64 * 1024);
      this.at = 0;
    }
    const v = this.block.readUInt32BE(this.at);
    this.at += 4;
    return v % n;
  }
}

function sourceLine(d: Dice): string {
  if (d.int(8) === 0) return KEYWORD_LINES[d.int(KEYWORD_LINES.length)] ?? '';
  const words = Array.from({ length: 2 + d.int(8) }, () => WORDS[d.int(WORDS.length)]);
  return `${'  '.repeat(d.int(4))}${words.join(d.int(3) === 0 ? '.' : ' ')}${d.int(2) ? ';' : ' {'} // ${d.int(100_000)}`;
}

function newFile(d: Dice, bytes: number): string[] {
  const lines: string[] = [];
  for (let size = 0; size < bytes; ) {
    const line = sourceLine(d);
    lines.push(line);
    size += line.length + 1;
  }
  return lines;
}

/** A few line edits in place: replace, insert a small block, delete. */
function editFile(d: Dice, lines: string[], maxEdits: number): void {
  const edits = 1 + d.int(maxEdits);
  for (let i = 0; i < edits; i++) {
    const at = d.int(lines.length + 1);
    const op = d.int(3);
    if (op === 0 && at < lines.length) lines[at] = sourceLine(d);
    else if (op === 1 || lines.length < 8) {
      lines.splice(at, 0, ...Array.from({ length: 1 + d.int(5) }, () => sourceLine(d)));
    } else lines.splice(at, 1 + d.int(3));
  }
}

function filePath(n: number): string {
  return `src/m${String(n % 32).padStart(2, '0')}/file${String(n).padStart(5, '0')}.ts`;
}

/** One commit of the stream: the files it writes (path → content) and its message. */
export interface HistoryCommit {
  message: string;
  files: Array<{ path: string; content: Buffer }>;
}

/** The commits of the history, in order: the initial files, then `history.commits` edits. */
export function* historyCommits(
  spec: HistoryInput,
  next: (bytes: number) => Buffer,
): Generator<HistoryCommit> {
  const d = new Dice(next);
  const files = Array.from({ length: spec.files }, () => newFile(d, spec.fileBytes));
  const blob = (i: number) => ({ path: filePath(i), content: Buffer.from(`${files[i]?.join('\n')}\n`) });
  yield { message: 'Initial import\n', files: files.map((_, i) => blob(i)) };
  for (let c = 1; c <= spec.history.commits; c++) {
    const touched = new Set<number>();
    if (d.int(20) === 0) {
      files.push(newFile(d, spec.fileBytes));
      touched.add(files.length - 1);
    }
    for (let e = 0; e < spec.history.editsPerCommit; e++) {
      const i = d.int(files.length);
      const lines = files[i];
      if (!lines) continue;
      editFile(d, lines, spec.history.maxLineEdits);
      touched.add(i);
    }
    yield { message: `Change ${c}: ${WORDS[d.int(WORDS.length)]}\n`, files: [...touched].map(blob) };
  }
}

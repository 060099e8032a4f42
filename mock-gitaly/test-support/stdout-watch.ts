/**
 * A wait for a test client's stdout (as `read` returns it) to satisfy a predicate: the client calls
 * `wake()` on every response; the predicate is also re-checked every 100 ms, and the wait rejects
 * after its time limit.
 */
export class StdoutWatch {
  private readonly waiters = new Set<() => void>();

  constructor(private readonly read: () => Buffer) {}

  wake(): void {
    for (const wake of this.waiters) wake();
  }

  async waitFor(predicate: (stdout: Buffer) => boolean, timeoutMs: number): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.read())) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for stdout; got ${this.read().toString()}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, 100);
        this.waiters.add(wake);
      });
    }
    return this.read();
  }
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folder the hooks are installed in: the configured `runtimeDir`, else a temporary one removed at stop. */
export class RuntimeDir {
  readonly #configured: string | undefined;
  #temp: string | undefined;

  constructor(configured: string | undefined) {
    this.#configured = configured;
  }

  /** The configured folder, or a new temporary one. */
  async acquire(): Promise<string> {
    if (this.#configured !== undefined) return this.#configured;
    this.#temp = await mkdtemp(join(tmpdir(), 'mock-gitaly-'));
    return this.#temp;
  }

  /** Removes the temporary folder, if one was made. */
  async removeTemp(): Promise<void> {
    if (this.#temp !== undefined) await rm(this.#temp, { recursive: true, force: true });
    this.#temp = undefined;
  }
}

import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jwtKey } from '../../lib/jwt.js';
import type { CellConfig } from '../config.js';
import type { CellDirectory } from './directory.js';
import { InternalApi } from './internal-api.js';

type Behaviour = 'hang' | 'refuse' | 'answer';

/** Cells that hang until cancelled, refuse at once, or answer a key; `opened` counts the calls. */
function directory(behaviours: Behaviour[]) {
  const opened: string[] = [];
  const cells = behaviours.map((b, i) => ({ name: `cell_${i}`, url: `http://127.0.0.1:${1000 + i}`, b }));
  const transport = (cell: { name: string; b: Behaviour }) => ({
    open: async () => {
      opened.push(cell.name);
      if (cell.b === 'refuse') throw new Error('connect ECONNREFUSED');
      let cancel: () => void = () => undefined;
      const response = new Promise<{ status: number; headers: object; body: Readable }>((resolve, reject) => {
        cancel = () => reject(new Error('cancelled'));
        if (cell.b === 'answer')
          resolve({ status: 200, headers: {}, body: Readable.from([Buffer.from('{"id":7}')]) });
      });
      return { body: new Writable({ write: (_c, _e, cb) => cb() }), response, cancel: () => cancel() };
    },
    close: async () => undefined,
  });
  const dir = {
    preferenceOrder: () => cells as unknown as CellConfig[],
    transport: (cell: CellConfig) => transport(cell as unknown as { name: string; b: Behaviour }),
  } as unknown as CellDirectory;
  return { dir, opened };
}

describe('InternalApi on any cell (authorized_keys, discover)', () => {
  it('gives every cell tried together one timeout: slow cells do not add up', async () => {
    const { dir, opened } = directory(['hang', 'hang', 'hang', 'hang']);
    const api = new InternalApi(dir, jwtKey('s'), 300);
    const started = Date.now();
    const err = await api.findKey('AAAA', { requestId: 'r' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ROUTER_ERR_INTERNAL_API_UNREACHABLE' });
    // The log says the cell did not answer in time, not that a socket hung up.
    expect((err as Error).cause).toMatchObject({
      message: 'no answer in time (internalApiTimeoutMs 300)',
    });
    // One timeout, not one per cell (4 × 300 ms).
    expect(Date.now() - started).toBeLessThan(900);
    expect(opened).toEqual(['cell_0']);
  });

  it('still moves on to the next cell when one fails fast', async () => {
    const { dir, opened } = directory(['refuse', 'refuse', 'answer']);
    const api = new InternalApi(dir, jwtKey('s'), 300);
    await expect(api.findKey('AAAA', { requestId: 'r' })).resolves.toMatchObject({ id: 7 });
    expect(opened).toEqual(['cell_0', 'cell_1', 'cell_2']);
  });
});

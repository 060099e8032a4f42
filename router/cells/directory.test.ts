import { describe, expect, it } from 'vitest';
import type { CellConfig } from '../config.js';
import { CellDirectory } from './directory.js';
import { Http1Transport } from './http1-transport.js';

const cell = (id: number, extra: Partial<CellConfig> = {}): CellConfig => ({
  id,
  name: `cell_${id}`,
  legacy: id === 1,
  region: 'us',
  url: `http://127.0.0.1:${4000 + id}`,
  ...extra,
});

describe('CellDirectory transports', () => {
  it("speaks a cell's own protocol, else the router's cellProtocol (also for Topology Service cells)", async () => {
    const cells = [cell(1), cell(2, { protocol: 'h2c' }), cell(3, { protocol: 'http1' })];
    const h2cDefault = new CellDirectory(cells, 'us', {}, Math.random, 'h2c');
    const kinds = (d: CellDirectory, list: CellConfig[]) =>
      list.map((c) => (d.transport(c) instanceof Http1Transport ? 'http1' : 'other'));
    expect(kinds(h2cDefault, cells)).toEqual(['other', 'other', 'http1']);
    expect(kinds(h2cDefault, [h2cDefault.forUrl('http://10.0.0.9:5000')])).toEqual(['other']);
    const http1Default = new CellDirectory(cells, 'us');
    expect(kinds(http1Default, cells)).toEqual(['http1', 'other', 'http1']);
    expect(kinds(http1Default, [http1Default.forUrl('http://10.0.0.9:5000')])).toEqual(['http1']);
    await Promise.all([h2cDefault.close(), http1Default.close()]);
  });
});

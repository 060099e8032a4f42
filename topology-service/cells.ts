import type { CellInfo } from '../lib/generated/gitlab/cells/topology_service/CellInfo.js';
import type { CellConfig } from './config.js';
import { CellNotFound, InvalidArgument } from './errors.js';

const INT64_MAX = 2n ** 63n - 1n;

/** The configured cells, by id and by session prefix. */
export class CellDirectory {
  readonly all: readonly CellConfig[];
  private readonly byId = new Map<number, CellConfig>();
  private readonly byPrefix = new Map<string, CellConfig>();

  constructor(cells: readonly CellConfig[]) {
    if (cells.length === 0) throw new Error('a topology needs at least one cell');
    this.all = cells;
    for (const cell of cells) {
      this.byId.set(cell.id, cell);
      if (cell.sessionPrefix !== undefined) this.byPrefix.set(cell.sessionPrefix, cell);
    }
  }

  /** FIRST_CELL: the first cell of the configuration (what it resolves to upstream is unconfirmed). */
  first(): CellConfig {
    return this.all[0] as CellConfig;
  }

  byIdOrUndefined(id: number): CellConfig | undefined {
    return this.byId.get(id);
  }

  bySessionPrefix(prefix: string): CellConfig | undefined {
    return this.byPrefix.get(prefix);
  }

  /** A cell id as it arrives (int64 as a decimal string); NOT_FOUND for an unknown one. */
  get(id: string | number | undefined): CellConfig {
    const cell = this.byIdOrUndefined(parseCellId(id));
    if (!cell) throw CellNotFound(`cell ${id} does not exist`);
    return cell;
  }
}

/** A decimal int64 cell id → number; INVALID_ARGUMENT for anything else (no base36 here). */
export function parseCellId(id: string | number | undefined, what = 'cell id'): number {
  const text = String(id ?? '');
  if (!/^-?\d+$/.test(text)) throw InvalidArgument(`invalid ${what}: ${JSON.stringify(text)}`);
  const n = BigInt(text);
  if (n < 0n || n > INT64_MAX) throw InvalidArgument(`invalid ${what}: ${text}`);
  // Beyond what a configured id can be: matches no cell.
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(n);
}

/** `CellInfo` as GetCells and GetCell answer it (int64 as strings, as proto-loader encodes them). */
export function cellInfo(cell: CellConfig): CellInfo {
  const ranges = cell.sequenceRanges.map((r) => ({ minval: String(r.minval), maxval: String(r.maxval) }));
  return {
    id: String(cell.id),
    name: cell.name,
    address: cell.address,
    session_prefix: cell.sessionPrefix ?? '',
    ...(ranges[0] ? { sequence_range: ranges[0] } : {}),
    sequence_ranges: ranges,
  };
}

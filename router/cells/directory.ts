import type { CellConfig } from '../config.js';
import { type CellProtocol, type CellTransport, createCellTransport, type TlsOptions } from './transport.js';

/** `host:port` of a cell URL, the default port written out. */
export function cellAuthority(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return `${u.hostname}:${port}`.toLowerCase();
}

/** The configured cells, one transport each, and the orders in which the router asks them. */
export class CellDirectory {
  private readonly byName = new Map<string, CellConfig>();
  private readonly transports = new Map<string, CellTransport>();
  readonly legacy: CellConfig;

  constructor(
    readonly cells: readonly CellConfig[],
    private readonly region: string,
    private readonly tls: TlsOptions = {},
    private readonly random: () => number = Math.random,
    /** For cells that name no `protocol` (router `cellProtocol`). */
    private readonly defaultProtocol: CellProtocol = 'http1',
  ) {
    for (const cell of cells) {
      this.byName.set(cell.name, cell);
      this.transports.set(cell.name, createCellTransport(cell.url, tls, cell.protocol ?? defaultProtocol));
    }
    const legacy = cells.find((c) => c.legacy);
    if (!legacy) throw new Error('cells: no legacy cell');
    this.legacy = legacy;
  }

  get(name: string): CellConfig | undefined {
    return this.byName.get(name);
  }

  byId(id: number): CellConfig | undefined {
    return this.cells.find((c) => c.id === id);
  }

  /** The cell whose URL has this `host:port` (default ports count: `cell.example:443`). */
  byAddress(address: string): CellConfig | undefined {
    const wanted = address.toLowerCase();
    return this.cells.find((c) => cellAuthority(c.url) === wanted);
  }

  /**
   * The cell at `url` (`topology` mode: a cell URL built from a Topology Service answer): the
   * configured cell with that `host:port`, else a cell of its own (id 0, named `topology:<host:port>`)
   * with a transport, kept for later calls.
   */
  forUrl(url: string): CellConfig {
    const authority = cellAuthority(url);
    const known = this.byAddress(authority) ?? this.byName.get(`topology:${authority}`);
    if (known) return known;
    const cell: CellConfig = { id: 0, name: `topology:${authority}`, legacy: false, region: '', url };
    this.byName.set(cell.name, cell);
    this.transports.set(cell.name, createCellTransport(url, this.tls, this.defaultProtocol));
    return cell;
  }

  transport(cell: CellConfig): CellTransport {
    const t = this.transports.get(cell.name);
    if (!t) throw new Error(`no transport for cell ${cell.name}`);
    return t;
  }

  /** A random cell of the router's region (learn requests spread over the region). */
  pickRegional(): CellConfig {
    return this.preferenceOrder()[0] as CellConfig;
  }

  /** The router's region's cells in random order, then the others in random order. */
  preferenceOrder(): CellConfig[] {
    const local = this.shuffle(this.cells.filter((c) => c.region === this.region));
    const remote = this.shuffle(this.cells.filter((c) => c.region !== this.region));
    return [...local, ...remote];
  }

  private shuffle(list: CellConfig[]): CellConfig[] {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [out[i], out[j]] = [out[j] as CellConfig, out[i] as CellConfig];
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.transports.values()].map((t) => t.close()));
  }
}

import * as grpc from '@grpc/grpc-js';
import type { ClassifyResponse__Output } from '../../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { Claim } from '../../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import type { Logger } from '../../lib/logger.js';
import { callUnary, type TopologyClients, topologyClients } from '../../topology-service/client.js';
import type { CellDirectory } from '../cells/directory.js';
import type { CallContext } from '../cells/internal-api.js';
import type { CellConfig } from '../config.js';
import type { RouterMetrics } from '../metrics.js';
import { buildCellUrl, type CellEndpoint } from './cell-url.js';

/**
 * gitlab-shell's topology resolver (`../shared/docs/topology-service.md` §2.3, §1.8): one unary
 * `Classify` with the claim in field 4, at most 3 attempts with exponential backoff 50 → 250 ms on
 * transient codes only, each attempt bounded by `timeoutMs`. A PROXY answer with a usable
 * `proxy.address` names the cell (`cell-url.ts`); NOT_FOUND, any other answer and every failure give
 * the legacy cell (failures counted in `topologyErrors`).
 */

/** Codes gitlab-shell retries (resolver.go); everything else is final. */
const RETRIED = new Set<number>([
  grpc.status.UNAVAILABLE,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.ABORTED,
  grpc.status.INTERNAL,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNKNOWN,
]);
export const ATTEMPTS = 3;
export const BACKOFF_MS = [50, 250] as const;

export interface TopologyResolverOptions {
  address: string;
  cellEndpoint: CellEndpoint;
  timeoutMs: number;
}

export type Resolution =
  | { outcome: 'proxy'; cell: CellConfig }
  | { outcome: 'not-found' | 'unusable' | 'failed'; cell: CellConfig };

export function isRetried(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code !== 'number' || RETRIED.has(code);
}

export class TopologyResolver {
  readonly #clients: TopologyClients;

  constructor(
    private readonly cells: CellDirectory,
    private readonly metrics: RouterMetrics,
    private readonly log: Logger,
    private readonly opts: TopologyResolverOptions,
  ) {
    this.#clients = topologyClients(opts.address);
  }

  get legacy(): CellConfig {
    return this.cells.legacy;
  }

  /** The cell of the cell URL `proxy.address` gives (a configured cell when one has that URL). */
  cellOfAddress(address: string): CellConfig | undefined {
    const url = buildCellUrl(address, this.opts.cellEndpoint);
    return url === undefined ? undefined : this.cells.forUrl(url);
  }

  async resolve(claim: Claim, ctx: CallContext): Promise<Resolution> {
    const legacy = this.cells.legacy;
    const log = ctx.log ?? this.log;
    this.metrics.topologyClassifies++;
    let res: ClassifyResponse__Output;
    try {
      res = await this.classifyWithRetry(claim, ctx);
    } catch (err) {
      if ((err as { code?: unknown }).code === grpc.status.NOT_FOUND) {
        this.metrics.topologyNotFound++;
        log.debug({ claim }, 'topology: claim not found, legacy cell');
        return { outcome: 'not-found', cell: legacy };
      }
      this.metrics.topologyErrors++;
      log.warn(
        { claim, err: (err as Error).message, legacy: legacy.name },
        'topology classify failed, legacy cell',
      );
      return { outcome: 'failed', cell: legacy };
    }
    const address = res.action === 'PROXY' ? (res.proxy?.address ?? '') : '';
    const cell = address === '' ? undefined : this.cellOfAddress(address);
    if (!cell) {
      log.warn({ claim, action: res.action, address }, 'topology answer not usable, legacy cell');
      return { outcome: 'unusable', cell: legacy };
    }
    return { outcome: 'proxy', cell };
  }

  private async classifyWithRetry(claim: Claim, ctx: CallContext): Promise<ClassifyResponse__Output> {
    const metadata = new grpc.Metadata();
    metadata.set('x-gitlab-correlation-id', ctx.requestId);
    for (let attempt = 1; ; attempt++) {
      try {
        return await callUnary<ClassifyResponse__Output>(
          (md, o, cb) => this.#clients.classify.Classify({ claim }, md, o, cb),
          { deadlineMs: this.opts.timeoutMs, metadata },
        );
      } catch (err) {
        if (attempt >= ATTEMPTS || !isRetried(err) || ctx.signal?.aborted) throw err;
        await new Promise((r) => setTimeout(r, BACKOFF_MS[attempt - 1]));
      }
    }
  }

  close(): void {
    this.#clients.close();
  }
}

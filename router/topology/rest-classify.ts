import type { Logger } from '../../lib/logger.js';
import {
  CLASSIFY_REQUEST,
  CLASSIFY_RESPONSE,
  readJson,
  writeJson,
} from '../../topology-service/proto-json.js';
import type { RouteDecision, RoutingRuleResult } from '../http/decide.js';
import type { RouterMetrics } from '../metrics.js';
import type { Classification } from '../routing/classifier.js';
import type { TopologyResolver } from './resolver.js';

/**
 * The HTTP Router's side of the Topology Service (`topology` mode): a rule whose action is
 * `classify` (`CELL_ID` from a routable token, `SESSION_PREFIX` from the session cookie, `FIRST_CELL`)
 * is sent as `POST <topologyServiceUrl>/v1/classify` with the oldest request shape (`{type, value}`,
 * proto3 JSON), and the `proxy.address` of the answer names the cell (gitlab-shell's cell-URL rule,
 * `cell-url.ts`). Only when the path does not decide the cell (`fallback`), as with local rules.
 * NOT_FOUND, an unusable answer and any failure (down, timeout, 5xx) → the legacy cell; failures
 * are counted in `topologyErrors`.
 */
export class RestClassifier {
  constructor(
    private readonly baseUrl: string,
    private readonly resolver: TopologyResolver,
    private readonly metrics: RouterMetrics,
    private readonly timeoutMs: number,
  ) {}

  async decide(
    rule: RoutingRuleResult,
    route: Classification,
    ctx: { requestId: string; log: Logger },
  ): Promise<RouteDecision | undefined> {
    if (rule.kind !== 'classify' || route.source !== 'fallback') return undefined;
    const legacy = this.resolver.legacy;
    this.metrics.topologyClassifies++;
    let status = 0;
    let address = '';
    try {
      const res = await fetch(new URL('/v1/classify', this.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': ctx.requestId },
        body: JSON.stringify(
          writeJson(CLASSIFY_REQUEST, { type: rule.type, value: rule.value }, { emitUnpopulated: false }),
        ),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      const json: unknown = await res.json().catch(() => undefined);
      if (status === 200) {
        const body = readJson(CLASSIFY_RESPONSE, json) as { action?: string; proxy?: { address?: string } };
        address = body.action === 'PROXY' ? (body.proxy?.address ?? '') : '';
      }
    } catch (err) {
      status = -1;
      ctx.log.warn({ rule: rule.ruleId, err: (err as Error).message }, 'topology REST classify failed');
    }
    if (status === 404) {
      this.metrics.topologyNotFound++;
      return {
        cell: legacy,
        by: 'legacy',
        ignoredRule: `${rule.type} ${rule.value} not found by the Topology Service`,
      };
    }
    if (status !== 200) {
      this.metrics.topologyErrors++;
      this.metrics.fallbacks++;
      return { cell: legacy, by: 'legacy', ignoredRule: `Topology Service classify failed (${status})` };
    }
    const cell = address === '' ? undefined : this.resolver.cellOfAddress(address);
    if (!cell)
      return { cell: legacy, by: 'legacy', ignoredRule: `unusable proxy.address ${JSON.stringify(address)}` };
    return { cell, by: 'rule' };
  }
}

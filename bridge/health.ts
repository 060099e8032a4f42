import { outcomeOfStatus } from './metrics.js';
import type { RouteHandler } from './routes.js';

export const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** `{"status":"ok"}` with 200, or `{"status":"shutting-down"}` with 503 once shutdown has begun. */
export function healthBody(closing: boolean): { status: number; body: string } {
  return closing
    ? { status: 503, body: JSON.stringify({ status: 'shutting-down' }) }
    : { status: 200, body: JSON.stringify({ status: 'ok' }) };
}

/** `GET /-/bridge/health`: the bridge's own answer, Rails is not asked. */
export function healthHandler(isClosing: () => boolean): RouteHandler {
  return async (ex) => {
    const { status, body } = healthBody(isClosing());
    ex.send(status, JSON_TYPE, body);
    return { outcome: outcomeOfStatus(status), status };
  };
}

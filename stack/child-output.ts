export type LogLine = Record<string, unknown>;

/**
 * Where each service's `listening` line (its main.ts) names the addresses it bound: `host:port`
 * strings or URLs. A service whose folder is not listed is ready on its `listening` line alone.
 */
const BOUND_FIELDS: Record<string, (line: LogLine) => unknown[]> = {
  router: (l) => [l.ssh, l.http, l.metrics],
  bridge: (l) => [l.listen, l.metrics, l.shell],
  'topology-service': (l) => [l.grpc, l.http],
  'mock-gitaly': (l) => [l.address],
  edge: (l) => (Array.isArray(l.addresses) ? l.addresses : []),
  'mock-cell': (l) => (Array.isArray(l.addresses) ? l.addresses.map((a) => (a as LogLine | null)?.url) : []),
};

/** `http://127.0.0.1:4001/x` or `127.0.0.1:4001` → `127.0.0.1:4001`. */
function hostPort(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/.*$/, '');
}

/** The `host:port` addresses a service's `listening` line reports it bound. */
export function boundAddresses(service: string, line: LogLine): Set<string | undefined> {
  return new Set((BOUND_FIELDS[service]?.(line) ?? []).map(hostPort));
}

/** A JSON object line (a pino log line), or undefined. */
export function parseJson(line: string): LogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(line) as unknown;
    return v !== null && typeof v === 'object' ? (v as LogLine) : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `onLine` for every complete line of `stream` (and a last unterminated one at its end). */
export function eachLine(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) onLine(p);
  });
  stream.on('end', () => {
    if (rest !== '') onLine(rest);
  });
}

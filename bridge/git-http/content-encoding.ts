/**
 * @file Workhorse's answer-encoding choice for info/refs: `Accept-Encoding` weighed against the two
 * encodings it offers, `gzip` first then `identity`. The first offer that a strictly better-weighted
 * entry names (or `*`) wins; with no entry at all the answer stays `identity`.
 */

const OFFERS = ['gzip', 'identity'] as const;

interface Weighted {
  value: string;
  q: number;
}

/** `gzip;q=0.5, *;q=0` → entries with their weight (1 when not given; a bad weight drops the entry). */
export function parseAcceptEncoding(header: string): Weighted[] {
  const out: Weighted[] = [];
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim());
    if (name === '') continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=').map((s) => s.trim());
      if (key?.toLowerCase() === 'q') q = Number(value);
    }
    if (Number.isFinite(q) && q >= 0 && q <= 1) out.push({ value: name.toLowerCase(), q });
  }
  return out;
}

/** Whether info/refs is answered gzipped for this `Accept-Encoding`. */
export function wantsGzip(acceptEncoding: string | undefined): boolean {
  let best: string = 'identity';
  let bestQ = -1;
  const entries = parseAcceptEncoding(acceptEncoding ?? '');
  for (const offer of OFFERS) {
    for (const e of entries) {
      if (e.q > bestQ && (e.value === '*' || e.value === offer)) {
        best = offer;
        bestQ = e.q;
      }
    }
  }
  return best === 'gzip' && bestQ > 0;
}

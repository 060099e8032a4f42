/** @file Reading the internal API's answers as GitLab Shell does: messages, redirects, JSON bodies. */
import type { IncomingHttpHeaders } from 'node:http';
import { CELL_REDIRECT_HEADER } from '../../lib/contracts/internal-api.js';
import { asObject, type Unchecked } from '../../lib/contracts/unchecked.js';
import { RouterError } from '../errors.js';

/** One answer of the internal API, its body read (up to the limit) as text. */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** The redirects Go's client would follow; gitlab-shell never follows them on the internal API. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function stringOr(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The JSON `message` of an answer, if it has one. */
function jsonMessageOf(answer: RawAnswer): string | undefined {
  try {
    return stringOr(asObject(JSON.parse(answer.text))?.message);
  } catch {
    return undefined;
  }
}

/** The JSON `message` of an answer, else its text. */
export function messageOf(answer: RawAnswer): string | undefined {
  return jsonMessageOf(answer) ?? stringOr(answer.text.trim());
}

export function redirectHeader(headers: IncomingHttpHeaders): string | undefined {
  const v = headers[CELL_REDIRECT_HEADER.toLowerCase()];
  return stringOr(Array.isArray(v) ? v[0] : v);
}

/** GitLab Shell's error mapping: the answer's JSON `message`, else "Internal API error (<code>)". */
export function errorFromAnswer(answer: RawAnswer) {
  const message = jsonMessageOf(answer);
  if (!message) return RouterError.internalApi(`Internal API error (${answer.status})`);
  return answer.status >= 500 ? RouterError.internalApi(message) : RouterError.accessDenied(message);
}

export function parseJsonObject<T>(answer: RawAnswer, what: string): Unchecked<T> {
  // 300 is not one of them: it is the custom action, parsed as any answer.
  if (REDIRECT_STATUSES.has(answer.status)) {
    const location = answer.headers.location;
    throw RouterError.internalApi(
      `Internal API returned redirect (${answer.status}) to ${JSON.stringify((Array.isArray(location) ? location[0] : location) ?? '')}`,
    );
  }
  if (answer.status < 200 || answer.status > 399) throw errorFromAnswer(answer);
  try {
    const obj = asObject<T>(JSON.parse(answer.text));
    if (obj) return obj;
  } catch {
    // fall through
  }
  throw RouterError.internalApi(`${what} answered a body that is not a JSON object`);
}

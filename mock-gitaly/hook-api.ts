import type { IncomingMessage, RequestOptions } from 'node:http';
import { jwtKey, SHELL_HEADER, signShellJwt } from '../lib/jwt-sign.js';

/** How long one internal API request of a hook may stay silent. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * One request with node:http(s), not fetch: the hooks are a process per push, and the first fetch call
 * loads undici, 40–90 ms of start-up on this machine.
 */
async function request(url: URL, body: Buffer, options: RequestOptions) {
  const { request: send } =
    url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = send(url, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A failure whose message is meant for the pushing user (printed as `GitLab: <message>`). */
export class InternalApiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InternalApiError';
  }
}

export interface PostReceiveMessage {
  message: string;
  type: string;
}

interface ApiResponse {
  status: number;
  body: Record<string, unknown> | undefined;
}

/**
 * The cell's internal API as Gitaly's hooks call it: JSON POSTs signed with a fresh shell JWT (no
 * `gl_id`). Transport failures and unreadable answers become GitLab Shell's wording.
 */
export class InternalApi {
  private readonly key: Uint8Array;

  constructor(
    private readonly baseUrl: string,
    secret: string,
  ) {
    this.key = jwtKey(secret);
  }

  private async post(path: string, payload: unknown): Promise<ApiResponse> {
    const url = new URL(`${this.baseUrl.replace(/\/+$/, '')}/api/v4/internal/${path}`);
    let status: number;
    let text: string;
    try {
      const body = Buffer.from(JSON.stringify(payload));
      ({ status, text } = await request(url, body, {
        method: 'POST',
        headers: {
          [SHELL_HEADER]: await signShellJwt(this.key),
          'content-type': 'application/json',
          'content-length': body.length,
          'user-agent': 'mock-gitaly-hooks',
        },
        timeout: REQUEST_TIMEOUT_MS,
      }));
    } catch {
      throw new InternalApiError('Internal API unreachable');
    }
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        body = parsed as Record<string, unknown>;
      }
    } catch {
      body = undefined;
    }
    return { status, body };
  }

  /** Error answers with a JSON `message` carry a reason for the user; others are API errors. */
  private static reason(res: ApiResponse): string {
    const message = res.body?.message;
    if (typeof message === 'string' && message !== '') return message;
    return `Internal API error (${res.status})`;
  }

  /** `/allowed` for a push: `{status, message}`; a non-2xx answer with a message is a denial. */
  async allowed(params: Record<string, unknown>): Promise<{ status: boolean; message: string }> {
    const res = await this.post('allowed', params);
    if (res.status >= 200 && res.status < 300 && typeof res.body?.status === 'boolean') {
      const message = typeof res.body.message === 'string' ? res.body.message : '';
      return { status: res.body.status, message };
    }
    if (res.status >= 400 && typeof res.body?.message === 'string') {
      return { status: false, message: res.body.message };
    }
    throw new InternalApiError(InternalApi.reason(res));
  }

  /** `/pre_receive`: true when Rails increased the reference counter. */
  async preReceive(glRepository: string): Promise<boolean> {
    const res = await this.post('pre_receive', { gl_repository: glRepository });
    if (res.status < 200 || res.status >= 300) throw new InternalApiError(InternalApi.reason(res));
    return res.body?.reference_counter_increased === true;
  }

  /** `/post_receive`: the messages to show the user. */
  async postReceive(params: Record<string, unknown>): Promise<PostReceiveMessage[]> {
    const res = await this.post('post_receive', params);
    if (res.status < 200 || res.status >= 300) throw new InternalApiError(InternalApi.reason(res));
    const messages = Array.isArray(res.body?.messages) ? res.body.messages : [];
    return messages.flatMap((m: unknown) => {
      const { message, type } = (m ?? {}) as Record<string, unknown>;
      return typeof message === 'string'
        ? [{ message, type: typeof type === 'string' ? type : 'basic' }]
        : [];
    });
  }
}

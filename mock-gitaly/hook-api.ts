import { jwtKey, SHELL_HEADER, signShellJwt } from '../lib/jwt.js';

/** How long one internal API request of a hook may take. */
const REQUEST_TIMEOUT_MS = 30_000;

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
    const url = `${this.baseUrl.replace(/\/+$/, '')}/api/v4/internal/${path}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          [SHELL_HEADER]: await signShellJwt(this.key),
          'content-type': 'application/json',
          'user-agent': 'mock-gitaly-hooks',
        },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await res.text();
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
    return { status: res.status, body };
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

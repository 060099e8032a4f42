/** One answer of an HTTP front: status, the cell that served it, where it redirects, the body. */
export interface Answer {
  status: number;
  cell: string | null;
  location: string | null;
  body: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
}

/** A browser-like client of one HTTP front: keeps the `_gitlab_session` cookie, never follows redirects. */
export class HttpClient {
  session: string | undefined;
  constructor(protected readonly base: string) {}

  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.session) headers.cookie = `_gitlab_session=${this.session}`;
    let body: string | undefined;
    if (opts.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(opts.form).toString();
    } else if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(`${this.base}${path}`, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    for (const cookie of res.headers.getSetCookie()) {
      const m = /^_gitlab_session=([^;]*)/.exec(cookie);
      if (m) this.session = m[1] === '' ? undefined : m[1];
    }
    return {
      status: res.status,
      cell: res.headers.get('x-gitlab-cell'),
      location: res.headers.get('location'),
      body: text,
    };
  }

  /** Posts the demo sign-in form (password `<login>-password`) to `path`. */
  signIn(login: string, path = '/users/sign_in'): Promise<Answer> {
    return this.request('POST', path, signInForm(login));
  }
}

/** The demo sign-in form of `login` (password `<login>-password`). */
export function signInForm(login: string): RequestOptions {
  return { form: { 'user[login]': login, 'user[password]': `${login}-password` } };
}

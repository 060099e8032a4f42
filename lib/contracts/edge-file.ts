/**
 * @file The edge file (user-facing, versioned): the figures of the HTTP edge a world puts between its
 * routers and every cell (`gitlab-cells-ssh up --edge FILE`, `STACK_EDGE`, `startWorld({ edge })`).
 * `schemas/edge.schema.json` is generated from this file (`npm run generate:schemas`). Every figure
 * left out is the `base` kind's; every time is multiplied by `timeScale`.
 */

/** What runs between the routers and the cells: nothing, Debian's nginx or HAProxy, or nginx with Cloudflare's figures. */
export type EdgeKind = 'none' | 'nginx' | 'haproxy' | 'cloudflare';

/** The proxy program an edge runs. */
export type EdgeProxy = 'nginx' | 'haproxy';

export interface EdgeFile {
  /** The schema of this file, for editors. */
  $schema?: string;
  /** Version of this format. */
  version: 1;
  /** The kind whose figures this file starts from (default `nginx`). */
  base?: Exclude<EdgeKind, 'none'>;
  /** The proxy that runs (default: the base's; `cloudflare` runs nginx). */
  proxy?: EdgeProxy;
  /**
   * Every time below (and the base's) is multiplied by this, e.g. 0.1: Cloudflare's 15 s idle
   * connection becomes 1.5 s (default 1).
   * @exclusiveMinimum 0
   * @maximum 10
   */
  timeScale?: number;
  /**
   * Idle request body (ms): the body may stay silent this long (nginx `client_body_timeout`;
   * HAProxy has no body-only timeout, its `timeout client` applies).
   * @minimum 1
   */
  idleBodyTimeoutMs?: number;
  /**
   * Idle connection (ms): neither side sends for this long and the edge closes (nginx
   * `proxy_read_timeout`, `proxy_send_timeout`, `send_timeout`, `keepalive_timeout`; HAProxy
   * `timeout server` and `timeout tunnel`).
   * @minimum 1
   */
  idleTimeoutMs?: number;
  /**
   * HAProxy `timeout client` (ms); default `idleTimeoutMs`. nginx ignores it.
   * @minimum 1
   */
  haproxyTimeoutClientMs?: number;
  /**
   * HAProxy `timeout server` (ms); default `idleTimeoutMs`. nginx ignores it.
   * @minimum 1
   */
  haproxyTimeoutServerMs?: number;
  /**
   * Whether the edge buffers the whole request body of `*\/ssh-upload-pack`, `*\/ssh-receive-pack` and
   * `*\/ssh-upload-archive` before it opens the upstream request (nginx `proxy_request_buffering on`;
   * HAProxy `option http-buffer-request`, which waits for at most one buffer, 16 KiB).
   */
  bufferSshPackBody?: boolean;
  /** Whether the edge buffers responses (nginx `proxy_buffering`; HAProxy streams either way). */
  bufferResponse?: boolean;
  /**
   * Largest request body in bytes, 0 for no limit (nginx `client_max_body_size`; HAProxy has none).
   * @minimum 0
   */
  maxBodyBytes?: number;
  /**
   * Whether every upstream request is HTTP/1.1 with `Connection: close` (nginx's own default
   * manner) rather than kept alive in a pool (default true).
   */
  upstreamConnectionClose?: boolean;
}

import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type JwtKey,
  SHELL_HEADER,
  verifyShellJwt,
  verifyWorkhorseJwt,
  WORKHORSE_HEADER,
} from '../../lib/jwt.js';

/** How the fake answers pre-authorization for one project. */
export type Policy =
  | {
      kind: 'allow';
      /** `Repository.relative_path` (default `<project>.git`). */
      relativePath?: string;
      callMetadata?: Record<string, string>;
      gitConfigOptions?: string[];
      gitalyAddress?: string;
      gitalyToken?: string;
    }
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body: string | Buffer }
  | { kind: 'hang' };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The client (the bridge) closed the connection before an answer was sent. */
  abandoned: boolean;
}

export interface FakeRails {
  url: string;
  requests: RecordedRequest[];
  /** Pre-authorization requests only. */
  preauths(): RecordedRequest[];
  setPolicy(project: string, policy: Policy): void;
  close(): Promise<void>;
}

const PREAUTH = /^\/(.+)\.git\/ssh-(upload-pack|receive-pack|upload-archive)$/;

/**
 * A Rails stand-in, for what the real mock cell cannot do: record what the bridge sent (pre-auth
 * headers, proxied requests: every other path is echoed), hang, answer any status and body, accept
 * Geo, or hand out a Gitaly address, token or config options of a test's choosing. Pre-authorization
 * checks both JWTs as Rails does, then answers per project policy.
 */
export async function startFakeRails(opts: {
  shellKey: JwtKey;
  workhorseKey: JwtKey;
  gitalyAddress: string;
  gitalyToken: string;
  storageName?: string;
}): Promise<FakeRails> {
  const requests: RecordedRequest[] = [];
  const policies = new Map<string, Policy>();
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      const rec: RecordedRequest = {
        method: req.method ?? '',
        url,
        headers: req.headers,
        body: Buffer.concat(parts),
        abandoned: false,
      };
      requests.push(rec);
      res.once('close', () => {
        rec.abandoned = !res.writableFinished;
      });
      const path = url.split('?')[0] ?? '';
      const m = req.method === 'POST' ? PREAUTH.exec(path) : null;
      if (!m) {
        echo(rec, res);
        return;
      }
      void preauth(m[1] as string, req.headers, res);
    });
  });

  const preauth = async (project: string, headers: IncomingHttpHeaders, res: http.ServerResponse) => {
    const wh = await verifyWorkhorseJwt(opts.workhorseKey, headers[WORKHORSE_HEADER] as string | undefined);
    if (!wh.ok) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`workhorse token ${wh.reason}`);
      return;
    }
    const policy = policies.get(project) ?? { kind: 'allow' };
    if (policy.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (policy.kind === 'answer') {
      res.writeHead(policy.status, policy.headers ?? { 'content-type': 'text/plain' }).end(policy.body);
      return;
    }
    const shell = await verifyShellJwt(opts.shellKey, headers[SHELL_HEADER] as string | undefined, {
      requireGlId: true,
    });
    // Stand-in for Rails' Geo check: `GL-Geo <node>:<token>` is good when the token is "valid".
    const geo = /^GL-Geo [^:]+:valid$/.test(headers.authorization ?? '');
    if (!shell.ok && headers.authorization?.startsWith('GL-Geo ') && !geo) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Geo JWT authentication failed: bad token');
      return;
    }
    if (!shell.ok && !geo) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.gitlab-workhorse+json' }).end(
      JSON.stringify({
        GL_ID: shell.ok ? shell.claims.gl_id : 'key-1',
        GL_REPOSITORY: 'project-1',
        GL_USERNAME: 'alice',
        ShowAllRefs: false,
        Repository: {
          storage_name: opts.storageName ?? 'default',
          relative_path: policy.relativePath ?? `${project}.git`,
          git_object_directory: '',
          git_alternate_object_directories: [],
          gl_repository: 'project-1',
          gl_project_path: project,
        },
        GitConfigOptions: policy.gitConfigOptions ?? [],
        GitalyServer: {
          address: policy.gitalyAddress ?? opts.gitalyAddress,
          token: policy.gitalyToken ?? opts.gitalyToken,
          call_metadata: policy.callMetadata ?? {},
        },
      }),
    );
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    preauths: () => requests.filter((r) => PREAUTH.test(r.url.split('?')[0] ?? '')),
    setPolicy: (project, policy) => policies.set(project, policy),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Echo: status from `?status=`, a marker header, JSON of what arrived. */
function echo(rec: RecordedRequest, res: http.ServerResponse): void {
  const status = Number(new URL(rec.url, 'http://x').searchParams.get('status') ?? '200');
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-fake-rails': 'echo',
    'set-cookie': ['a=1', 'b=2'],
  });
  res.end(
    JSON.stringify({
      method: rec.method,
      url: rec.url,
      headers: rec.headers,
      body: rec.body.toString('utf8'),
    }),
  );
}

/**
 * @file The nginx.conf of an nginx edge (kinds `nginx` and `cloudflare`): one `server` per cell on
 * the address the routers dial, proxying to that cell's bridge with the edge's figures. Every path is
 * under the edge's own folder; loopback only.
 */
import { join } from 'node:path';
import type { EdgeFigures } from './figures.js';
import { nginxTempPaths, nginxUserLine } from './nginx-files.js';
import { configName, type EdgeRoute, SSH_PACK_PATH } from './routes.js';

export interface NginxEdgeInput {
  /** The edge's folder: pid, logs and temp folders. */
  dir: string;
  figures: EdgeFigures;
  routes: readonly EdgeRoute[];
  /** The `user` directive line (default: root when started as root, else none). */
  userLine?: string;
}

const ms = (n: number) => `${n}ms`;

function upstreamBlock(route: EdgeRoute, f: EdgeFigures): string {
  return [
    `  upstream ${configName(route.cell)} {`,
    `    server ${route.upstream};`,
    ...(f.upstreamConnectionClose ? [] : ['    keepalive 16;']),
    '  }',
  ].join('\n');
}

function serverBlock(route: EdgeRoute, f: EdgeFigures): string {
  const up = `http://${configName(route.cell)}`;
  return `  server {
    listen ${route.listen};
    # gitlab-shell's tunnel: the request body ${f.bufferSshPackBody ? 'buffered whole before the upstream request opens' : 'streamed as it comes'}.
    location ~ ${SSH_PACK_PATH} {
      proxy_pass ${up};
      proxy_request_buffering ${f.bufferSshPackBody ? 'on' : 'off'};
    }
    location / {
      proxy_pass ${up};
    }
  }`;
}

/** The generated nginx.conf. */
export function nginxEdgeConfig(o: NginxEdgeInput): string {
  const f = o.figures;
  return `# The world's nginx edge (generated; not the system's nginx): loopback only.
${o.userLine ?? nginxUserLine()}daemon off;
master_process on;
worker_processes 1;
pid ${join(o.dir, 'nginx.pid')};
error_log ${join(o.dir, 'error.log')} info;
events { worker_connections 1024; }
http {
  log_format edge '$remote_addr "$request" $status $body_bytes_sent $request_time $upstream_status';
  access_log ${join(o.dir, 'access.log')} edge;
${nginxTempPaths(o.dir)}
  # An idle request body (between two reads) is ended after this: the ~60 s kill of reference-cell.md §1.5.
  client_body_timeout ${ms(f.idleBodyTimeoutMs)};
  client_max_body_size ${f.maxBodyBytes};
  # An idle connection: nothing from the upstream, nothing taken by the client, an idle keep-alive.
  proxy_read_timeout ${ms(f.idleTimeoutMs)};
  proxy_send_timeout ${ms(f.idleTimeoutMs)};
  send_timeout ${ms(f.idleTimeoutMs)};
  keepalive_timeout ${ms(f.idleTimeoutMs)};
  proxy_connect_timeout 5s;
  proxy_http_version 1.1;
  proxy_set_header Host $http_host;
  proxy_set_header Connection ${f.upstreamConnectionClose ? 'close' : '""'};
  proxy_buffering ${f.bufferResponse ? 'on' : 'off'};
${o.routes.map((r) => upstreamBlock(r, f)).join('\n')}
${o.routes.map((r) => serverBlock(r, f)).join('\n')}
}
`;
}

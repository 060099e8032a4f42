/**
 * @file The haproxy.cfg of a HAProxy edge: one frontend per cell on the address the routers dial,
 * its backend the cell's bridge, with the edge's figures. Logs go to HAProxy's stderr (the edge
 * service's log); loopback only.
 */
import type { EdgeFigures } from './figures.js';
import { configName, type EdgeRoute, SSH_PACK_PATH } from './routes.js';

export interface HaproxyEdgeInput {
  figures: EdgeFigures;
  routes: readonly EdgeRoute[];
}

const ms = (n: number) => `${n}ms`;

function frontBlock(route: EdgeRoute, f: EdgeFigures): string {
  const name = configName(route.cell);
  const lines = [
    `frontend ${name}`,
    `  bind ${route.listen}`,
    `  acl ssh_pack path_reg ${SSH_PACK_PATH}`,
    // `option http-buffer-request` for the tunnel's paths only: wait for the body (at most one buffer).
    ...(f.bufferSshPackBody
      ? [`  http-request wait-for-body time ${ms(f.idleBodyTimeoutMs)} if ssh_pack`]
      : []),
    ...(f.maxBodyBytes > 0
      ? [`  http-request deny deny_status 413 if { req.hdr_val(content-length) gt ${f.maxBodyBytes} }`]
      : []),
    `  default_backend ${name}`,
    '',
    `backend ${name}`,
    `  server bridge ${route.upstream}`,
  ];
  return lines.join('\n');
}

/** The generated haproxy.cfg. */
export function haproxyEdgeConfig(o: HaproxyEdgeInput): string {
  const f = o.figures;
  return `# The world's HAProxy edge (generated; not the system's HAProxy): loopback only.
global
  log stderr format raw local0 info
  maxconn 4096

defaults
  mode http
  log global
  option httplog
  timeout connect 5s
  # the client side idle (sends nothing, takes nothing)
  timeout client ${ms(f.haproxyTimeoutClientMs)}
  # the server side idle
  timeout server ${ms(f.haproxyTimeoutServerMs)}
  timeout http-request ${ms(f.idleBodyTimeoutMs)}
  timeout http-keep-alive ${ms(f.idleTimeoutMs)}
  ${f.upstreamConnectionClose ? 'option http-server-close' : 'option http-keep-alive'}

${o.routes.map((r) => frontBlock(r, f)).join('\n\n')}
`;
}

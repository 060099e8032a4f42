import { describe, expect, it } from 'vitest';
import { edgeFigures } from './figures.js';
import { haproxyEdgeConfig } from './haproxy-config.js';
import { nginxEdgeConfig } from './nginx-config.js';

const routes = [
  { cell: 'cell_eu0', listen: '127.0.0.4:4443', upstream: '127.0.0.1:4003' },
  { cell: 'conf-north', listen: '127.0.0.3:4443', upstream: '127.0.0.1:4002' },
];

describe('the nginx edge config', () => {
  const conf = (over = {}) =>
    nginxEdgeConfig({
      dir: '/data/edge',
      figures: edgeFigures('cloudflare', { timeScale: 0.1, ...over }),
      routes,
      userLine: '',
    });

  it('puts one server per cell on its address, proxying to its bridge over HTTP/1.1 with Connection: close', () => {
    const c = conf();
    expect(c).toContain('upstream cell_cell_eu0 {\n    server 127.0.0.1:4003;\n  }');
    expect(c).toContain('upstream cell_conf_north {');
    expect(c).toMatch(/server \{\n {4}listen 127\.0\.0\.4:4443;/);
    expect(c).toContain('proxy_http_version 1.1;');
    expect(c).toContain('proxy_set_header Connection close;');
    expect(c).toContain('daemon off;');
    expect(c).not.toContain('user ');
  });

  it('writes the scaled timeouts: idle body 6 s, idle connection 1.5 s', () => {
    const c = conf();
    expect(c).toContain('client_body_timeout 6000ms;');
    for (const d of ['proxy_read_timeout', 'proxy_send_timeout', 'send_timeout', 'keepalive_timeout'])
      expect(c).toContain(`${d} 1500ms;`);
  });

  it('buffers the ssh-*-pack body only when asked, responses only when asked, bodies up to the limit', () => {
    expect(conf()).toMatch(
      /ssh-\(upload-pack\|receive-pack\|upload-archive\)\$ \{[^}]*proxy_request_buffering off;/,
    );
    expect(conf({ bufferSshPackBody: true })).toMatch(
      /upload-archive\)\$ \{[^}]*proxy_request_buffering on;/,
    );
    expect(conf()).toContain('proxy_buffering off;');
    expect(conf({ bufferResponse: true })).toContain('proxy_buffering on;');
    expect(conf({ maxBodyBytes: 1024 })).toContain('client_max_body_size 1024;');
    expect(conf()).toContain('client_max_body_size 0;');
  });

  it('keeps upstream connections alive in a pool when Connection: close is off', () => {
    const c = conf({ upstreamConnectionClose: false });
    expect(c).toContain('keepalive 16;');
    expect(c).toContain('proxy_set_header Connection "";');
  });

  it('keeps every file under its own folder', () => {
    const c = conf();
    for (const line of c.split('\n').filter((l) => /(_path|pid|_log) \//.test(l)))
      expect(line).toContain('/data/edge/');
  });
});

describe('the HAProxy edge config', () => {
  const conf = (over = {}) =>
    haproxyEdgeConfig({ figures: edgeFigures('haproxy', { timeScale: 0.1, ...over }), routes });

  it('puts one frontend per cell on its address, its backend the bridge, closing upstream connections', () => {
    const c = conf();
    expect(c).toContain('frontend cell_cell_eu0\n  bind 127.0.0.4:4443');
    expect(c).toContain('backend cell_conf_north\n  server bridge 127.0.0.1:4002');
    expect(c).toContain('option http-server-close');
    expect(conf({ upstreamConnectionClose: false })).toContain('option http-keep-alive');
  });

  it('writes timeout client / timeout server', () => {
    const c = conf({ haproxyTimeoutClientMs: 20_000, haproxyTimeoutServerMs: 30_000 });
    expect(c).toContain('timeout client 2000ms');
    expect(c).toContain('timeout server 3000ms');
    expect(c).toContain('timeout http-request 9000ms');
  });

  it('waits for the ssh-*-pack body only when asked; refuses declared bodies above the limit', () => {
    expect(conf()).not.toContain('wait-for-body');
    expect(conf({ bufferSshPackBody: true })).toContain('http-request wait-for-body time 9000ms if ssh_pack');
    expect(conf({ maxBodyBytes: 10 })).toContain('deny_status 413 if { req.hdr_val(content-length) gt 10 }');
  });
});

#!/usr/bin/env node
// A GIT_SSH_COMMAND stand-in for tests: instead of ssh, POST stdin to the bridge's tunnel route
// and copy the response to stdout, as GitLab Shell does for Cells. git calls it as
//   git-ssh-tunnel.mjs [-o SendEnv=GIT_PROTOCOL] [-p port] host "git-upload-pack '/group/project.git'"
// Environment: BRIDGE_TUNNEL_URL (bridge base URL), BRIDGE_TUNNEL_TOKEN (shell JWT),
// BRIDGE_TUNNEL_PROTOCOL (h1 | h2, default h1), BRIDGE_TUNNEL_FRAMED=1 (ask for response framing:
// stderr and the exit status of the remote git come back separately), GIT_PROTOCOL (from git).
import http from 'node:http';
import http2 from 'node:http2';

const command = process.argv.at(-1) ?? '';
const m = /^(git-upload-pack|git-receive-pack|git-upload-archive) '\/?(.+?)'$/.exec(command);
if (!m) {
  process.stderr.write(`git-ssh-tunnel: unsupported command ${JSON.stringify(command)}\n`);
  process.exit(128);
}
const service = m[1].replace(/^git-/, 'ssh-');
const project = m[2].endsWith('.git') ? m[2] : `${m[2]}.git`;
const path = `/${project}/${service}`;
const framed = process.env.BRIDGE_TUNNEL_FRAMED === '1';
const headers = { 'gitlab-shell-api-request': process.env.BRIDGE_TUNNEL_TOKEN ?? '' };
if (process.env.GIT_PROTOCOL) headers['git-protocol'] = process.env.GIT_PROTOCOL;
if (framed) headers['gitlab-cells-response-framing'] = 'v1';

function finish(code) {
  process.stdout.write('', () => process.exit(code));
}

function onResponse(status, body) {
  if (status !== 200) {
    const parts = [];
    body.on('data', (c) => parts.push(c));
    body.on('end', () => {
      process.stderr.write(
        `remote: ${Buffer.concat(parts).toString() || 'Remote repository is unavailable'}\n`,
      );
      process.exit(1);
    });
    return;
  }
  if (!framed) {
    body.pipe(process.stdout, { end: false });
    body.on('end', () => finish(0));
    return;
  }
  // [type:1][length:4 BE][payload]: 1 stdout, 2 stderr, 3 exit status, 4 keepalive, 5 error.
  let pending = Buffer.alloc(0);
  let exit = 0;
  body.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5) {
      const len = pending.readUInt32BE(1);
      if (pending.length < 5 + len) break;
      const type = pending[0];
      const payload = pending.subarray(5, 5 + len);
      pending = pending.subarray(5 + len);
      if (type === 1) process.stdout.write(payload);
      else if (type === 2) process.stderr.write(payload);
      else if (type === 3) exit = payload.readInt32BE(0);
      else if (type === 5) process.stderr.write(`remote: ${JSON.parse(payload.toString()).message}\n`);
    }
  });
  body.on('end', () => finish(exit));
}

const base = process.env.BRIDGE_TUNNEL_URL ?? '';
if (process.env.BRIDGE_TUNNEL_PROTOCOL === 'h2') {
  const session = http2.connect(base);
  session.on('error', (err) => {
    process.stderr.write(`git-ssh-tunnel: ${err.message}\n`);
    process.exit(128);
  });
  const stream = session.request({ ':method': 'POST', ':path': path, ...headers }, { endStream: false });
  stream.on('response', (h) => onResponse(Number(h[':status']), stream));
  process.stdin.pipe(stream);
} else {
  const req = http.request(new URL(path, base), {
    method: 'POST',
    headers: { ...headers, 'transfer-encoding': 'chunked' },
  });
  req.on('error', (err) => {
    process.stderr.write(`git-ssh-tunnel: ${err.message}\n`);
    process.exit(128);
  });
  req.on('response', (res) => onResponse(res.statusCode ?? 0, res));
  req.flushHeaders();
  process.stdin.pipe(req);
}

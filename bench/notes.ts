/** @file The notes a results file carries: what was run, how, and what its figures mean. */
import { BRIDGE_NODE_FLAGS, ROUTER_NODE_FLAGS } from '../stack/node-flags.js';
import type { BenchOptions } from './options.js';
import type { GeneratedRepo } from './repo-gen.js';
import { MIB } from './stats.js';

/** The run's notes under the results table: how each contender was set up. */
export function benchNotes(o: BenchOptions, stackEnv: Record<string, string>, slow: GeneratedRepo): string[] {
  const notes = [
    'Clones are `git clone --bare` (no checkout), so the transport and index-pack are timed, not writing files.',
    'All git contenders serve the very same bare repositories (the stack’s storage folders); the private sshd runs a forced-command wrapper (`git upload-pack`/`receive-pack`), with `AcceptEnv GIT_PROTOCOL`, `MaxStartups 1000` and `SetEnv SHLVL=1` (so bash does not source the benchmark account’s `~/.bashrc`, which a dedicated git account would not have).',
    `The stack ran with ${Object.entries(stackEnv)
      .map(([k, v]) => `\`${k}=${v}\``)
      .join(
        ', ',
      )}: one benchmark user holds up to ${Math.max(...o.concurrency, o.idleTunnels)} tunnels at once.`,
    `The router and the bridges run as the stack starts them, the router with \`node ${ROUTER_NODE_FLAGS.join(' ')}\`, the bridges with \`node ${BRIDGE_NODE_FLAGS.join(' ')}\` (stack/node-flags.ts: V8’s young generation capped, the router’s old generation allowed to grow to 4× its live heap; README “Performance”, Memory).`,
    `The nginx contender is Debian’s nginx started by the benchmark on a loopback port with a generated config (\`fastcgi_buffering off\`, \`client_max_body_size 0\`), in front of ${o.fcgiChildren} preforked fcgiwrap processes running \`git http-backend\` (\`GIT_PROJECT_ROOT\` of symlinks to the same repositories, \`GIT_HTTP_EXPORT_ALL\`, \`REMOTE_USER\` set so receive-pack is on, \`Git-Protocol\` passed on); no authentication. The cells path over HTTP clones \`http://bob:bob-password@<router HTTP front>/<project>.git\`: router → bridge (Rails pre-authorization per request) → mock Gitaly SmartHTTPService.`,
    'SSH ciphers: the rows that name none use the cipher OpenSSH’s client picks from its own list (the negotiated line above: ChaCha20-Poly1305 with both servers); the AES-GCM rows add `-c aes128-gcm@openssh.com` to the same ssh command line, for OpenSSH and the cells path, in the same rounds as the other large clones.',
    'Cells-path pushes run Gitaly-style hooks (pre-receive → Rails `/allowed`, post-receive); over SSH and HTTP; direct, OpenSSH and nginx pushes have no hooks.',
    'The bridge talks to Gitaly as current Gitaly requires: upload-pack over `SSHUploadPackWithSidechannel` on the yamux backchannel. The stream-mode rows use the bidi `SSHUploadPack` (Gitaly < 17.8): the mock Gitalys run with `legacyUploadPack` (they keep serving the sidechannel too), and a second bridge process with `gitalyUploadPack: "stream"` runs beside the stack’s, with the same cell config, in front of the same Rails and Gitaly.',
    'CPU by process: each service’s own time (utime+stime of /proc/<pid>/stat); git under mock Gitaly is the time of the children it reaped (cutime+cstime); git under sshd is what the forced command’s shell reports for its git child (`times`), and sshd (own) is the rest of sshd’s process tree (listener, connection processes, the shell). fcgiwrap ignores SIGCHLD, so its CGI is a shell running `git http-backend` as a child and reporting it with `times` the same way (git under fcgiwrap).',
  ];
  if (slow.packBytes < 1024 * MIB) {
    notes.push(
      `The slow-reader repository is ${(slow.packBytes / MIB).toFixed(0)} MiB, smaller than the 1 GiB of the full benchmark.`,
    );
  }
  if (o.mode === 'quick')
    notes.push('Quick mode: a smoke test with small counts; its figures are not measurements.');
  return notes;
}

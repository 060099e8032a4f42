import * as grpc from '@grpc/grpc-js';
import {
  GitalyConnection,
  type GitService,
  parseGitalyAddress,
  SidechannelRegistry,
} from '../../lib/gitaly/index.js';
import { gitalyAuthHeader } from '../../lib/gitaly-auth.js';

/**
 * Test helper: an `ssh` stand-in for `GIT_SSH_COMMAND` that runs the git command's RPC against a
 * mock Gitaly through the bridge's Gitaly client (`lib/gitaly`: backchannel connection; upload-pack
 * as `SSHUploadPackWithSidechannel`, or the bidi `SSHUploadPack` with FAKE_SSH_UPLOAD_PACK=stream),
 * so real `git clone`/`push`/`archive --remote` exercise the server. Set `GIT_SSH_VARIANT=ssh`.
 * Environment: FAKE_SSH_GITALY (`host:port`, `tcp://`, `tls://` or `unix:`), FAKE_SSH_TOKEN,
 * FAKE_SSH_STORAGE, optional FAKE_SSH_GL_ID, FAKE_SSH_GL_USERNAME, FAKE_SSH_GL_REPOSITORY,
 * FAKE_SSH_CONFIG (JSON array of `key=value`), FAKE_SSH_UPLOAD_PACK (`sidechannel` | `stream`).
 * Exits with git's exit status, or 1 after printing a gRPC error.
 */
const SERVICES: Record<string, GitService> = {
  'git-upload-pack': 'upload-pack',
  'git-receive-pack': 'receive-pack',
  'git-upload-archive': 'upload-archive',
};

function fail(message: string): never {
  process.stderr.write(`fake-ssh: ${message}\n`);
  process.exit(255);
}

const argv = process.argv.slice(2);
let i = 0;
while (argv[i]?.startsWith('-')) i += ['-o', '-p', '-l', '-i'].includes(argv[i] as string) ? 2 : 1;
const command = argv.slice(i + 1).join(' ');
const m = /^(git-[a-z-]+) '(.*)'$/.exec(command);
const service = m ? SERVICES[m[1] as string] : undefined;
if (!m || !service) fail(`unsupported command ${JSON.stringify(command)}`);
const env = process.env;
const rawAddress = env.FAKE_SSH_GITALY ?? fail('FAKE_SSH_GITALY is not set');
const token = env.FAKE_SSH_TOKEN ?? fail('FAKE_SSH_TOKEN is not set');
const mode = env.FAKE_SSH_UPLOAD_PACK === 'stream' ? 'stream' : 'sidechannel';

const repository = {
  storage_name: env.FAKE_SSH_STORAGE ?? 'default',
  relative_path: (m[2] as string).replace(/^\/+/, ''),
  gl_repository: env.FAKE_SSH_GL_REPOSITORY ?? '',
};
const gitConfig: string[] = env.FAKE_SSH_CONFIG ? JSON.parse(env.FAKE_SSH_CONFIG) : [];
const gitProtocol = env.GIT_PROTOCOL ?? '';
const request: Record<string, unknown> =
  service === 'upload-pack'
    ? { repository, git_config_options: gitConfig, git_protocol: gitProtocol }
    : service === 'receive-pack'
      ? {
          repository,
          gl_id: env.FAKE_SSH_GL_ID ?? '',
          gl_username: env.FAKE_SSH_GL_USERNAME ?? '',
          gl_repository: repository.gl_repository,
          git_config_options: gitConfig,
          git_protocol: gitProtocol,
        }
      : { repository };

const address = /^[a-z]+:/.test(rawAddress) ? rawAddress : `tcp://${rawAddress}`;
const connection = new GitalyConnection(parseGitalyAddress(address), new SidechannelRegistry(), {
  uploadPack: mode,
  keepaliveMs: 20_000,
  userAgent: 'fake-ssh',
  flowControlWindow: 1 << 20,
  yamuxWindow: 256 * 1024,
});
const metadata = new grpc.Metadata();
metadata.set('authorization', gitalyAuthHeader(token));
const call = connection.open(service, request, metadata);

process.stdin.on('data', (chunk: Buffer) => {
  if (!call.writeStdin(chunk)) {
    process.stdin.pause();
    call.once('drain', () => process.stdin.resume());
  }
});
process.stdin.on('end', () => call.endStdin());
call.on('output', (kind, data) => {
  const out = kind === 'stdout' ? process.stdout : process.stderr;
  if (!out.write(data)) {
    call.pauseOutput();
    out.once('drain', () => call.resumeOutput());
  }
});
call.on('end', (result) => {
  let code = result.exitStatus ?? 0;
  if (result.code !== grpc.status.OK) {
    process.stderr.write(`fake-ssh: ${grpc.status[result.code]}: ${result.details}\n`);
    code = result.exitStatus || 1;
  }
  process.stdout.write('', () => process.exit(code));
});

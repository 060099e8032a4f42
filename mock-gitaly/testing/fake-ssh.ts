import * as grpc from '@grpc/grpc-js';
import { gitalyAuthHeader } from '../../lib/gitaly-auth.js';
import { loadSshService, type SSHStreamResponse } from '../../lib/proto.js';

/**
 * Test helper: an `ssh` stand-in for `GIT_SSH_COMMAND` that runs the git command's RPC against a
 * mock Gitaly and pipes stdio through it, so real `git clone`/`push`/`archive --remote` exercise the
 * server. Set `GIT_SSH_VARIANT=ssh`. Environment:
 * FAKE_SSH_GITALY (host:port), FAKE_SSH_TOKEN, FAKE_SSH_STORAGE, optional FAKE_SSH_GL_ID,
 * FAKE_SSH_GL_USERNAME, FAKE_SSH_GL_REPOSITORY, FAKE_SSH_CONFIG (JSON array of `key=value`).
 * Exits with git's exit status, or 1 after printing a gRPC error.
 */
const RPC: Record<string, string> = {
  'git-upload-pack': 'SSHUploadPack',
  'git-receive-pack': 'SSHReceivePack',
  'git-upload-archive': 'SSHUploadArchive',
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
const rpc = m ? RPC[m[1] as string] : undefined;
if (!m || !rpc) fail(`unsupported command ${JSON.stringify(command)}`);
const env = process.env;
const address = env.FAKE_SSH_GITALY ?? fail('FAKE_SSH_GITALY is not set');
const token = env.FAKE_SSH_TOKEN ?? fail('FAKE_SSH_TOKEN is not set');

const repository = {
  storage_name: env.FAKE_SSH_STORAGE ?? 'default',
  relative_path: (m[2] as string).replace(/^\/+/, ''),
  gl_repository: env.FAKE_SSH_GL_REPOSITORY ?? '',
};
const gitConfig: string[] = env.FAKE_SSH_CONFIG ? JSON.parse(env.FAKE_SSH_CONFIG) : [];
const gitProtocol = env.GIT_PROTOCOL ?? '';
const first: Record<string, unknown> =
  rpc === 'SSHUploadPack'
    ? { repository, git_config_options: gitConfig, git_protocol: gitProtocol }
    : rpc === 'SSHReceivePack'
      ? {
          repository,
          gl_id: env.FAKE_SSH_GL_ID ?? '',
          gl_username: env.FAKE_SSH_GL_USERNAME ?? '',
          gl_repository: repository.gl_repository,
          git_config_options: gitConfig,
          git_protocol: gitProtocol,
        }
      : { repository };

const Client = loadSshService();
const client = new Client(address, grpc.credentials.createInsecure());
const metadata = new grpc.Metadata();
metadata.set('authorization', gitalyAuthHeader(token));
const call = (
  client as unknown as Record<
    string,
    (md: grpc.Metadata) => grpc.ClientDuplexStream<unknown, SSHStreamResponse>
  >
)[rpc]!.call(client, metadata);

call.write(first);
process.stdin.on('data', (chunk: Buffer) => {
  if (!call.write({ stdin: chunk })) {
    process.stdin.pause();
    call.once('drain', () => process.stdin.resume());
  }
});
process.stdin.on('end', () => call.end());

let exitStatus = 0;
let status: grpc.StatusObject | undefined;
call.on('data', (res: SSHStreamResponse) => {
  if (res.stderr?.length) process.stderr.write(res.stderr);
  if (res.stdout?.length) process.stdout.write(res.stdout);
  if (res.exit_status) exitStatus = res.exit_status.value ?? 0;
});
call.on('error', () => {
  // Reported from the status below.
});
call.on('status', (s: grpc.StatusObject) => {
  status = s;
});
call.on('end', () => {
  let code = exitStatus;
  if (status && status.code !== grpc.status.OK) {
    process.stderr.write(`fake-ssh: ${grpc.status[status.code]}: ${status.details}\n`);
    code = exitStatus || 1;
  }
  process.stdout.write('', () => process.exit(code));
});

import type { Logger } from '../lib/logger.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { type GitCommand, receivePackCommand, uploadPackCommand } from './git-command.js';
import type { HooksPayload } from './hooks-payload.js';

/**
 * The git commands of `SmartHTTPService`: the SSH service's commands with `--stateless-rpc` (one
 * request, one response, as git's HTTP transport runs them), and `--advertise-refs` for info/refs.
 */

export type SmartHttpService = 'upload-pack' | 'receive-pack';

export interface SmartHttpRequest {
  git_config_options?: string[];
  git_protocol?: string;
}

/** Internal refs Gitaly keeps out of a fetch's advertisement (`refs/tmp/`, `refs/keep-around/`). */
const HIDDEN_FROM_FETCH = ['uploadpack.hideRefs=refs/tmp/', 'uploadpack.hideRefs=refs/keep-around/'];

function stateless(command: GitCommand, subcommand: string, advertise: boolean): GitCommand {
  const at = command.args.indexOf(subcommand);
  const flags = advertise ? ['--stateless-rpc', '--advertise-refs'] : ['--stateless-rpc'];
  return { ...command, args: [...command.args.slice(0, at + 1), ...flags, ...command.args.slice(at + 1)] };
}

/** The pkt-line and flush Gitaly writes before every advertisement, whatever the protocol version. */
export function serviceHeader(service: SmartHttpService): Buffer {
  return Buffer.concat([encodePkt(Buffer.from(`# service=git-${service}\n`)), FLUSH_PKT]);
}

/** `git upload-pack|receive-pack --stateless-rpc --advertise-refs <repo>` (no hooks run for it). */
export function infoRefsCommand(
  repoPath: string,
  service: SmartHttpService,
  req: SmartHttpRequest,
  logger: Logger,
): GitCommand {
  if (service === 'upload-pack') {
    const options = [...HIDDEN_FROM_FETCH, ...(req.git_config_options ?? [])];
    return stateless(
      uploadPackCommand(repoPath, { ...req, git_config_options: options }, logger),
      'upload-pack',
      true,
    );
  }
  const command = uploadPackCommand(repoPath, req, logger);
  const args = command.args.map((a) => (a === 'upload-pack' ? 'receive-pack' : a));
  return stateless({ ...command, args }, 'receive-pack', true);
}

export function postUploadPackCommand(repoPath: string, req: SmartHttpRequest, logger: Logger): GitCommand {
  return stateless(uploadPackCommand(repoPath, req, logger), 'upload-pack', false);
}

export function postReceivePackCommand(
  repoPath: string,
  req: SmartHttpRequest,
  hooks: { dir: string; payload: HooksPayload },
  logger: Logger,
): GitCommand {
  return stateless(receivePackCommand(repoPath, req, hooks, logger), 'receive-pack', false);
}

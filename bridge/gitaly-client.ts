import * as grpc from '@grpc/grpc-js';
import { GitalyConnections, type GitService, type SshRequest } from '../lib/gitaly/index.js';
import { gitalyAuthHeader } from '../lib/gitaly-auth.js';
import { BRIDGE_VERSION, type BridgeConfig } from './config.js';
import type { PreauthResponse } from './preauth.js';

/** `call_metadata` keys forwarded to Gitaly, as Workhorse's `withOutgoingMetadata` allows. */
const FORWARDED_METADATA = /^(gitaly-feature-.+|user_id|username|remote_ip)$/;

/** The bridge's Gitaly connections: one backchannel channel per (address, token). */
export function gitalyConnections(
  config: Readonly<BridgeConfig>,
  deps: { ca?: Buffer; onRefusedStream?: (address: string, reason: string) => void } = {},
): GitalyConnections {
  return new GitalyConnections({
    uploadPack: config.gitalyUploadPack,
    keepaliveMs: config.gitalyKeepaliveMs,
    userAgent: BRIDGE_VERSION,
    // HTTP/2 receive window towards Gitaly (stream and connection): 64 KiB would cap a
    // clone at one window per round trip.
    flowControlWindow: config.h2StreamWindowBytes,
    yamuxWindow: config.gitalyYamuxWindowBytes,
    ...deps,
  });
}

/** Per-call metadata: a fresh v2 token, the correlation id and the allowed `call_metadata` entries. */
export function callMetadata(
  token: string,
  correlationId: string,
  extra: Readonly<Record<string, string>>,
): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(extra)) {
    if (FORWARDED_METADATA.test(key)) md.set(key, value);
  }
  if (token !== '') md.set('authorization', gitalyAuthHeader(token));
  md.set('x-gitlab-correlation-id', correlationId);
  return md;
}

/**
 * The request of each RPC (the first message of the bidi ones, never with stdin). upload-pack's is
 * the same for `SSHUploadPackWithSidechannel` and the legacy `SSHUploadPack`.
 */
export function firstRequest(
  service: GitService,
  auth: PreauthResponse,
  gitProtocol: string | undefined,
): SshRequest {
  const repository = auth.Repository;
  const protocol = gitProtocol ? { git_protocol: gitProtocol } : {};
  switch (service) {
    case 'upload-pack':
      return { repository, git_config_options: auth.GitConfigOptions, ...protocol };
    case 'receive-pack':
      return {
        repository,
        gl_id: auth.GL_ID,
        gl_repository: auth.GL_REPOSITORY,
        gl_username: auth.GL_USERNAME,
        git_config_options: auth.GitConfigOptions,
        ...protocol,
      };
    case 'upload-archive':
      return { repository };
  }
}

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { PackfileNegotiationStatistics__Output } from './generated/gitaly/PackfileNegotiationStatistics.js';
import type { Repository__Output } from './generated/gitaly/Repository.js';
import type { SSHReceivePackRequest__Output } from './generated/gitaly/SSHReceivePackRequest.js';
import type { SSHUploadArchiveRequest__Output } from './generated/gitaly/SSHUploadArchiveRequest.js';
import type { SSHUploadPackRequest__Output } from './generated/gitaly/SSHUploadPackRequest.js';
import type { SSHUploadPackResponse__Output } from './generated/gitaly/SSHUploadPackResponse.js';
import type { SSHUploadPackWithSidechannelRequest__Output } from './generated/gitaly/SSHUploadPackWithSidechannelRequest.js';
import type { SSHUploadPackWithSidechannelResponse__Output } from './generated/gitaly/SSHUploadPackWithSidechannelResponse.js';

/** Walks up from this file to the folder holding package.json (works from lib/ and dist/lib/). */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the project root (package.json)');
    dir = up;
  }
  return dir;
}

export const PROTO_DIR = join(projectRoot(), 'protos');

/** One option set for every loader: snake_case fields, bytes as Buffer, absent fields stay absent. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

const loaded = new Map<string, grpc.ServiceClientConstructor>();

/** The `gitaly.<service>` definition of `protos/<file>`, loaded once per service. */
export function loadGitalyService(file: string, service: string): grpc.ServiceClientConstructor {
  let ctor = loaded.get(service);
  if (!ctor) {
    const def = protoLoader.loadSync(file, PROTO_LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      gitaly: Record<string, grpc.ServiceClientConstructor | undefined>;
    };
    ctor = pkg.gitaly[service];
    if (!ctor) throw new Error(`protos/${file} has no gitaly.${service}`);
    loaded.set(service, ctor);
  }
  return ctor;
}

/** The `gitaly.SSHService` definition, loaded once. */
export function loadSshService(): grpc.ServiceClientConstructor {
  return loadGitalyService('ssh.proto', 'SSHService');
}

// Message types are generated from protos/ by `npm run generate` (grpc-js's proto-loader-gen-types,
// with the loader options above) into lib/generated/, checked in and kept in step by
// test/unit/generated-protos.test.ts. The `__Output` shapes are what proto-loader decodes (Buffers,
// no nulls); they are also what this project writes.
export type ProtoRepository = Repository__Output;
export type SSHUploadPackRequest = SSHUploadPackRequest__Output;
export type SSHUploadPackWithSidechannelRequest = SSHUploadPackWithSidechannelRequest__Output;
export type SSHUploadPackWithSidechannelResponse = SSHUploadPackWithSidechannelResponse__Output;
export type PackfileNegotiationStatistics = PackfileNegotiationStatistics__Output;
export type SSHReceivePackRequest = SSHReceivePackRequest__Output;
export type SSHUploadArchiveRequest = SSHUploadArchiveRequest__Output;
/** Same shape for all three streaming RPCs. */
export type SSHStreamResponse = SSHUploadPackResponse__Output;

export const SSH_RPC = {
  uploadPack: 'SSHUploadPack',
  receivePack: 'SSHReceivePack',
  uploadArchive: 'SSHUploadArchive',
} as const;

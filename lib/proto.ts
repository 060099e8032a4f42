import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

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

let cached: grpc.ServiceClientConstructor | undefined;

/** The `gitaly.SSHService` definition, loaded once. */
export function loadSshService(): grpc.ServiceClientConstructor {
  if (!cached) {
    const def = protoLoader.loadSync('ssh.proto', PROTO_LOADER_OPTIONS);
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      gitaly: { SSHService: grpc.ServiceClientConstructor };
    };
    cached = pkg.gitaly.SSHService;
  }
  return cached;
}

export interface ProtoRepository {
  storage_name?: string;
  relative_path?: string;
  git_object_directory?: string;
  git_alternate_object_directories?: string[];
  gl_repository?: string;
  gl_project_path?: string;
}

export interface SSHUploadPackRequest {
  repository?: ProtoRepository;
  stdin?: Buffer;
  git_config_options?: string[];
  git_protocol?: string;
}

export interface SSHReceivePackRequest {
  repository?: ProtoRepository;
  stdin?: Buffer;
  gl_id?: string;
  gl_repository?: string;
  gl_username?: string;
  git_protocol?: string;
  git_config_options?: string[];
}

export interface SSHUploadArchiveRequest {
  repository?: ProtoRepository;
  stdin?: Buffer;
}

/** Same shape for all three streaming RPCs. */
export interface SSHStreamResponse {
  stdout?: Buffer;
  stderr?: Buffer;
  exit_status?: { value?: number };
}

export const SSH_RPC = {
  uploadPack: 'SSHUploadPack',
  receivePack: 'SSHReceivePack',
  uploadArchive: 'SSHUploadArchive',
} as const;

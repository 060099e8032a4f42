import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { RpcError } from './errors.js';
import {
  configArgs,
  protocolEnv,
  receivePackCommand,
  uploadArchiveCommand,
  uploadPackCommand,
} from './git-command.js';
import { decodeHooksPayload, HOOKS_PAYLOAD_ENV } from './hooks-payload.js';

const logger = createLogger('git-command-test', 'silent');

function invalid(fn: () => unknown): RpcError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RpcError && err.grpcCode === status.INVALID_ARGUMENT) return err;
    throw err;
  }
  throw new Error('expected INVALID_ARGUMENT');
}

describe('configArgs', () => {
  it('splits on the first "=" only', () => {
    expect(configArgs(['a.b=c=d', 'x.y='])).toEqual(['-c', 'a.b=c=d', '-c', 'x.y=']);
  });

  it.each(['novalue', '=value', ' =v', 'a b=c'])('rejects %j', (option) => {
    expect(invalid(() => configArgs([option])).message).toMatch(/^cannot convert invalid config key/);
  });

  it.each(['core.hooksPath=/x', 'uploadpack.packObjectsHook=sh', 'CORE.SSHCOMMAND=evil'])(
    'refuses %j',
    (option) => {
      expect(invalid(() => configArgs([option])).message).toMatch(/^config key not allowed/);
    },
  );
});

describe('protocolEnv', () => {
  it('passes only version=1 and version=2', () => {
    expect(protocolEnv('version=2', logger)).toEqual({ GIT_PROTOCOL: 'version=2' });
    expect(protocolEnv('version=1', logger)).toEqual({ GIT_PROTOCOL: 'version=1' });
    expect(protocolEnv('version=2:foo', logger)).toEqual({});
    expect(protocolEnv('', logger)).toEqual({});
    expect(protocolEnv(undefined, logger)).toEqual({});
  });
});

describe('commands', () => {
  it('upload-pack: Gitaly defaults, then the request options, then --end-of-options', () => {
    const cmd = uploadPackCommand(
      '/repos/a.git',
      { git_config_options: ['uploadpack.allowFilter=false'], git_protocol: 'version=2' },
      logger,
    );
    expect(cmd.args).toEqual([
      '-c',
      'uploadpack.allowFilter=true',
      '-c',
      'uploadpack.allowAnySHA1InWant=true',
      '-c',
      'uploadpack.allowFilter=false',
      'upload-pack',
      '--end-of-options',
      '/repos/a.git',
    ]);
    expect(cmd.env.GIT_PROTOCOL).toBe('version=2');
    expect(cmd.env.GIT_CONFIG_GLOBAL).toBe('/dev/null');
    expect(cmd.cwd).toBe('/repos/a.git');
  });

  it('receive-pack: hooks path last, payload in the environment', () => {
    const payload = {
      gl_id: 'user-1',
      gl_username: 'alice',
      gl_repository: 'project-1',
      gl_project_path: 'g/p',
      protocol: 'ssh' as const,
      repo_path: '/repos/a.git',
      gitlab_url: 'http://rails',
      gitlab_secret_file: '/secret',
    };
    const cmd = receivePackCommand(
      '/repos/a.git',
      { gl_id: 'user-1', git_config_options: ['receive.maxInputSize=1000'] },
      { dir: '/run/hooks', payload },
      logger,
    );
    expect(cmd.args).toEqual([
      '-c',
      'receive.advertisePushOptions=true',
      '-c',
      'transfer.fsckObjects=true',
      '-c',
      'receive.maxInputSize=1000',
      '-c',
      'core.hooksPath=/run/hooks',
      'receive-pack',
      '--end-of-options',
      '/repos/a.git',
    ]);
    expect(cmd.env.GIT_PROTOCOL).toBeUndefined();
    expect(decodeHooksPayload(cmd.env[HOOKS_PAYLOAD_ENV])).toEqual(payload);
  });

  it('upload-archive: no --end-of-options', () => {
    expect(uploadArchiveCommand('/repos/a.git').args).toEqual(['upload-archive', '/repos/a.git']);
  });
});

describe('decodeHooksPayload', () => {
  it('refuses missing, malformed or incomplete payloads', () => {
    expect(() => decodeHooksPayload(undefined)).toThrow(/not set/);
    expect(() => decodeHooksPayload('!!!')).toThrow(/base64 JSON/);
    expect(() => decodeHooksPayload(Buffer.from('{"gl_id":"user-1"}').toString('base64'))).toThrow(
      /gl_username/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { checkGitalyAuth } from '../lib/gitaly-auth.js';
import { callMetadata, firstRequest } from './gitaly-client.js';
import type { PreauthResponse } from './preauth.js';

const auth: PreauthResponse = {
  GL_ID: 'user-2',
  GL_REPOSITORY: 'project-7',
  GL_USERNAME: 'alice',
  Repository: { storage_name: 'default', relative_path: '@hashed/ab/cd/x.git' },
  GitConfigOptions: ['receive.maxInputSize=100'],
  GitalyServer: { address: 'tcp://127.0.0.1:9001', token: 't', call_metadata: {} },
};

describe('callMetadata', () => {
  it('carries a fresh v2 token, the correlation id and only the allowed call_metadata keys', () => {
    const md = callMetadata('secret', 'cid-1', {
      'gitaly-feature-x': 'true',
      user_id: '2',
      username: 'alice',
      remote_ip: '10.0.0.1',
      retry_config: '{}',
      authorization: 'forged',
    }).getMap();
    expect(checkGitalyAuth(md.authorization as string, 'secret')).toBe('ok');
    expect(md).toMatchObject({
      'x-gitlab-correlation-id': 'cid-1',
      'gitaly-feature-x': 'true',
      user_id: '2',
      username: 'alice',
      remote_ip: '10.0.0.1',
    });
    expect(md.retry_config).toBeUndefined();
  });

  it('sends no authorization when the token is empty', () => {
    expect(callMetadata('', 'c', {}).getMap().authorization).toBeUndefined();
  });
});

describe('firstRequest', () => {
  it('builds each RPC first message', () => {
    expect(firstRequest('upload-pack', auth, 'version=2')).toEqual({
      repository: auth.Repository,
      git_config_options: ['receive.maxInputSize=100'],
      git_protocol: 'version=2',
    });
    expect(firstRequest('receive-pack', auth, undefined)).toEqual({
      repository: auth.Repository,
      gl_id: 'user-2',
      gl_repository: 'project-7',
      gl_username: 'alice',
      git_config_options: ['receive.maxInputSize=100'],
    });
    expect(firstRequest('upload-archive', auth, 'version=2')).toEqual({ repository: auth.Repository });
  });
});

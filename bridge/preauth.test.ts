import { describe, expect, it } from 'vitest';
import { parsePreauthResponse } from './preauth.js';

const valid = {
  GL_ID: 'user-2',
  GL_REPOSITORY: 'project-1',
  GL_USERNAME: null,
  ShowAllRefs: false,
  Repository: {
    storage_name: 'default',
    relative_path: 'x.git',
    git_object_directory: '',
    git_alternate_object_directories: [],
    gl_repository: 'project-1',
    gl_project_path: 'g/x',
  },
  GitConfigOptions: [],
  GitalyServer: { address: 'tcp://h:1', token: 't', call_metadata: { 'gitaly-feature-a': 'true' } },
};

describe('parsePreauthResponse', () => {
  it('matches keys case-insensitively when none matches exactly, as Go’s encoding/json', () => {
    const { Repository, GitalyServer, ...rest } = valid;
    const parsed = parsePreauthResponse({
      gl_id: 'user-9',
      GL_ID: 'user-2',
      gl_repository: rest.GL_REPOSITORY,
      needaudit: true,
      repository: { STORAGE_NAME: Repository.storage_name, Relative_Path: Repository.relative_path },
      gitalyserver: { Address: GitalyServer.address, TOKEN: GitalyServer.token },
    });
    expect(parsed).toMatchObject({
      GL_ID: 'user-2',
      GL_REPOSITORY: 'project-1',
      NeedAudit: true,
      Repository: { storage_name: 'default', relative_path: 'x.git' },
      GitalyServer: { address: 'tcp://h:1', token: 't' },
    });
  });

  it('keeps the CI job and the scoped user for the push’s client context (Go’s GLBuildID too)', () => {
    expect(parsePreauthResponse({ ...valid, GLBuildID: '42', GlScopedUserID: '7' })).toMatchObject({
      GlBuildID: '42',
      GlScopedUserID: '7',
    });
    expect(parsePreauthResponse({ ...valid, GlBuildID: '', GlScopedUserID: null })).not.toHaveProperty(
      'GlBuildID',
    );
  });

  it("accepts the empty GL_ID of a Geo node's own fetch (Rails' :geo actor)", () => {
    expect(parsePreauthResponse({ ...valid, GL_ID: '' }).GL_ID).toBe('');
  });

  it('accepts what Rails sends and normalises empty values', () => {
    expect(parsePreauthResponse(valid)).toEqual({
      GL_ID: 'user-2',
      GL_REPOSITORY: 'project-1',
      GL_USERNAME: '',
      Repository: {
        storage_name: 'default',
        relative_path: 'x.git',
        git_alternate_object_directories: [],
        gl_repository: 'project-1',
        gl_project_path: 'g/x',
      },
      GitConfigOptions: [],
      GitalyServer: { address: 'tcp://h:1', token: 't', call_metadata: { 'gitaly-feature-a': 'true' } },
    });
  });

  it.each([
    ['not an object', []],
    ['no GL_ID', { ...valid, GL_ID: undefined }],
    ['no Repository', { ...valid, Repository: undefined }],
    ['no storage', { ...valid, Repository: { relative_path: 'x.git' } }],
    ['no GitalyServer', { ...valid, GitalyServer: undefined }],
    ['no address', { ...valid, GitalyServer: { token: 't' } }],
    [
      'bad metadata',
      { ...valid, GitalyServer: { address: 'tcp://h:1', token: 't', call_metadata: { a: 1 } } },
    ],
    ['bad options', { ...valid, GitConfigOptions: 'a=b' }],
    ['bad username', { ...valid, GL_USERNAME: 5 }],
    ['a numeric build id', { ...valid, GlBuildID: 42 }],
    ['a numeric scoped user', { ...valid, GlScopedUserID: 7 }],
  ])('refuses %s', (_name, json) => {
    expect(() => parsePreauthResponse(json)).toThrow(/pre-authorization answer/);
  });
});

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { createMetrics } from '../metrics.js';
import type { CommandContext, CommandDeps } from './context.js';
import { COMMANDS } from './index.js';
import { parseTokenArgs } from './personal-access-token.js';

function context(discover: () => Promise<{ username: string | null }>) {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const deps = { api: { discover }, metrics: createMetrics() } as unknown as CommandDeps;
  const ctx: CommandContext = {
    io: { stdin: new PassThrough(), stdout, stderr: new PassThrough() },
    args: [],
    actor: { keyId: '7' },
    remoteIp: '192.0.2.1',
    requestId: 'r1',
    gitProtocol: undefined,
    log: createLogger('test', 'silent'),
    signal: new AbortController().signal,
    deps,
  };
  return { ctx, out: () => Buffer.concat(chunks).toString() };
}

describe('commands over plain streams', () => {
  it('discover greets the key owner, or Anonymous', async () => {
    const named = context(async () => ({ username: 'alice' }));
    await expect(COMMANDS.discover.execute(named.ctx)).resolves.toBe(0);
    expect(named.out()).toBe('Welcome to GitLab, @alice!\n');
    const anonymous = context(async () => ({ username: null }));
    await COMMANDS.discover.execute(anonymous.ctx);
    expect(anonymous.out()).toBe('Welcome to GitLab, Anonymous!\n');
  });

  it('discover failures are thrown for the session to render, with GitLab Shell wording', async () => {
    const failing = context(async () => {
      throw new Error('boom');
    });
    await expect(COMMANDS.discover.execute(failing.ctx)).rejects.toMatchObject({
      code: 'ROUTER_ERR_DISCOVER',
      message: 'Failed to get username: Error: boom',
    });
    expect(failing.out()).toBe('');
  });
});

describe('personal_access_token arguments', () => {
  const now = new Date('2026-01-30T12:00:00Z');

  it('expires after 30 days, or ttl_days + 1, as gitlab-shell computes it', () => {
    expect(parseTokenArgs(['n', 'api'], [], now)).toEqual({
      name: 'n',
      scopes: ['api'],
      expiresAt: '2026-03-01',
    });
    expect(parseTokenArgs(['n', 'api', '0'], [], now).expiresAt).toBe('2026-01-31');
  });

  it('drops scopes outside the allowed list, when there is one', () => {
    expect(parseTokenArgs(['n', 'api,sudo,read_repository'], ['api', 'read_repository'], now).scopes).toEqual(
      ['api', 'read_repository'],
    );
  });

  it.each([[['n']], [['n', 'api', '1', 'extra']], [['n', 'api', '-1']], [['n', 'api', 'x']]])(
    'refuses %j',
    (args) => {
      expect(() => parseTokenArgs(args, [], now)).toThrow(
        /Usage: personal_access_token|Invalid value for days_ttl/,
      );
    },
  );
});

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { createMetrics } from '../metrics.js';
import type { CommandContext, CommandDeps } from './context.js';
import { COMMANDS } from './index.js';

function context(discover: () => Promise<{ username: string | null }>) {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const deps = { api: { discover }, metrics: createMetrics() } as unknown as CommandDeps;
  const ctx: CommandContext = {
    io: { stdin: new PassThrough(), stdout, stderr: new PassThrough() },
    args: [],
    keyId: '7',
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

/**
 * `discover`, `shell` or no command: `Welcome to GitLab, @<username>!` from
 * `/api/v4/internal/discover`, as gitlab-shell's `discover` prints it ("Anonymous" for `null`).
 */
import { isAppError } from '../../lib/errors.js';
import { RouterError } from '../errors.js';
import type { Command, CommandContext } from './context.js';

export const discover: Command = {
  async execute(ctx: CommandContext): Promise<number> {
    if ('username' in ctx.actor) {
      // A certificate named the user already (gitlab-sshd's username mode).
      ctx.io.stdout.write(`Welcome to GitLab, @${ctx.actor.username}!\n`);
      return 0;
    }
    let username: string | null;
    try {
      ({ username } = await ctx.deps.api.discover(ctx.actor.keyId, {
        requestId: ctx.requestId,
        remoteIp: ctx.remoteIp,
        signal: ctx.signal,
        log: ctx.log,
      }));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw RouterError.discover(
        `Failed to get username: ${isAppError(err) ? err.message : String(err)}`,
        err,
      );
    }
    ctx.io.stdout.write(username ? `Welcome to GitLab, @${username}!\n` : 'Welcome to GitLab, Anonymous!\n');
    return 0;
  },
};

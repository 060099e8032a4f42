/**
 * @file The engine the three git commands share (gitlab-shell's `uploadpack`, `receivepack`,
 * `uploadarchive` each call Gitaly; here each calls the cells tunnel): `/allowed` on the owning
 * cell, then the tunnel to its bridge (`tunnel/git-command.ts`).
 */

import type { GitService } from '../ssh/command.js';
import { runGitCommand } from '../tunnel/git-command.js';
import type { Command, CommandContext } from './context.js';

export function gitCommand(service: GitService): Command {
  return {
    execute(ctx: CommandContext): Promise<number> {
      const repo = ctx.args[0] ?? '';
      ctx.deps.metrics.sshGitCommands++;
      return runGitCommand(
        ctx.deps,
        {
          io: ctx.io,
          actor: ctx.actor,
          remoteIp: ctx.remoteIp,
          requestId: ctx.requestId,
          gitProtocol: ctx.gitProtocol,
          log: ctx.log,
          signal: ctx.signal,
          transport: ctx.transport,
        },
        service,
        repo,
      );
    },
  };
}

/**
 * `2fa_recovery_codes`, as gitlab-shell's `twofactorrecover`: asks for confirmation on the channel;
 * only `yes` asks the user's cell for new codes (and invalidates the old ones), anything else
 * changes nothing. A failure is printed on stdout, exit 0, as gitlab-shell does.
 */
import type { RecoveryCodesJson } from '../../lib/contracts/account-api.js';
import { isAppError } from '../../lib/errors.js';
import { postAccount, readAnswer } from './account.js';
import type { Command, CommandContext } from './context.js';

const QUESTION =
  'Are you sure you want to generate new two-factor recovery codes?\n' +
  'Any existing recovery codes you saved will be invalidated. (yes/no)\n';
const NOT_GENERATED = '\nNew recovery codes have *not* been generated. Existing codes will remain valid.\n';
const READ_LIMIT = 1024;

async function recoveryCodes(ctx: CommandContext): Promise<string[]> {
  const answer = await postAccount<RecoveryCodesJson>(ctx, '/two_factor_recovery_codes', {});
  if (answer.success === true && Array.isArray(answer.recovery_codes))
    return answer.recovery_codes.filter((c): c is string => typeof c === 'string');
  throw new Error(typeof answer.message === 'string' ? answer.message : 'Internal API error');
}

export const twoFactorRecovery: Command = {
  async execute(ctx: CommandContext): Promise<number> {
    ctx.io.stdout.write(QUESTION);
    const answer = await readAnswer(ctx.io.stdin, READ_LIMIT, ctx.signal);
    if (answer !== 'yes') {
      ctx.log.info('user chose not to regenerate recovery codes');
      ctx.io.stdout.write(NOT_GENERATED);
      return 0;
    }
    try {
      const codes = await recoveryCodes(ctx);
      ctx.io.stdout.write(
        `\nYour two-factor authentication recovery codes are:\n\n${codes.join('\n')}\n\n` +
          'During sign in, use one of the codes above when prompted for\n' +
          'your two-factor code. Then, visit your Profile Settings and add\n' +
          'a new device so you do not lose access to your account again.\n',
      );
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.log.warn({ err }, 'failed to generate recovery codes');
      const message = isAppError(err) || err instanceof Error ? err.message : String(err);
      ctx.io.stdout.write(`\nAn error occurred while trying to generate new recovery codes.\n${message}\n`);
    }
    return 0;
  },
};

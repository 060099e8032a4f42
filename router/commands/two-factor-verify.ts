/**
 * `2fa_verify`, as gitlab-shell's `twofactorverify`: prints `OTP: `, then asks the user's cell for a
 * push approval and, with what the user typed, a manual OTP check at once; the first answer wins
 * (a push that is not approved says nothing), 30 s at most. The verdict is printed on stdout, exit 0.
 */
import type { OtpCheckJson } from '../../lib/contracts/account-api.js';
import { isAppError } from '../../lib/errors.js';
import { postAccount, readAnswer } from './account.js';
import type { Command, CommandContext } from './context.js';

const TIMEOUT_MS = 30_000;
const OTP_LIMIT = 64;

function failed(err: unknown): string {
  return `OTP validation failed: ${isAppError(err) || err instanceof Error ? err.message : String(err)}`;
}

async function check(ctx: CommandContext, path: string, body: object): Promise<void> {
  const answer = await postAccount<OtpCheckJson>(ctx, path, body);
  if (answer.success !== true)
    throw new Error(typeof answer.message === 'string' ? answer.message : 'Internal API error');
}

async function manual(ctx: CommandContext): Promise<string> {
  try {
    const otp = await readAnswer(ctx.io.stdin, OTP_LIMIT, ctx.signal);
    if (otp === '') return failed(new Error('OTP cannot be blank'));
    await check(ctx, '/two_factor_manual_otp_check', { otp_attempt: otp });
    return 'OTP validation successful. Git operations are now allowed.';
  } catch (err) {
    return failed(err);
  }
}

export const twoFactorVerify: Command = {
  async execute(ctx: CommandContext): Promise<number> {
    ctx.io.stdout.write('OTP: ');
    // Ends the reader of stdin and the checks once a verdict is in.
    const done = new AbortController();
    const onAbort = () => done.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const local: CommandContext = { ...ctx, signal: done.signal };
    let timer: NodeJS.Timeout | undefined;
    const push = check(local, '/two_factor_push_otp_check', {}).then(
      () => 'OTP has been validated by Push Authentication. Git operations are now allowed.',
      () => new Promise<string>(() => undefined),
    );
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(failed(new Error('context deadline exceeded'))), TIMEOUT_MS);
    });
    const message = await Promise.race([manual(local), push, timeout]).finally(() => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      done.abort();
    });
    if (ctx.signal.aborted) throw ctx.signal.reason;
    ctx.log.info({ message }, 'two-factor verify finished');
    ctx.io.stdout.write(`\n${message}\n`);
    return 0;
  },
};

/**
 * `personal_access_token <name> <scope1[,scope2,...]> [ttl_days]`, as gitlab-shell's
 * `personalaccesstoken`: scopes outside `patAllowedScopes` (when set) are dropped, the token expires
 * after 30 days (or `ttl_days` + 1), minted by the user's cell in GitLab's routable format, so the
 * router's HTTP front sends requests carrying it to that same cell.
 */
import type { PersonalAccessTokenJson } from '../../lib/contracts/account-api.js';
import { RouterError } from '../errors.js';
import { postAccount, refusedUnlessSuccess } from './account.js';
import type { Command, CommandContext } from './context.js';

const USAGE = 'Usage: personal_access_token <name> <scope1[,scope2,...]> [ttl_days]';
const DAY_MS = 86_400_000;

export interface TokenArgs {
  name: string;
  scopes: string[];
  /** `YYYY-MM-DD`. */
  expiresAt: string;
}

export function parseTokenArgs(
  args: readonly string[],
  allowed: readonly string[],
  now = new Date(),
): TokenArgs {
  const [name, rawScopes, rawTtl] = args;
  if (name === undefined || rawScopes === undefined || args.length > 3)
    throw RouterError.accountRefused(USAGE);
  const requested = rawScopes.split(',');
  const scopes = allowed.length > 0 ? requested.filter((s) => allowed.includes(s)) : requested;
  let days = 30;
  if (rawTtl !== undefined) {
    if (!/^\+?\d+$/.test(rawTtl)) throw RouterError.accountRefused(`Invalid value for days_ttl: '${rawTtl}'`);
    days = Number(rawTtl) + 1;
  }
  return { name, scopes, expiresAt: new Date(now.getTime() + days * DAY_MS).toISOString().slice(0, 10) };
}

export const personalAccessToken: Command = {
  async execute(ctx: CommandContext): Promise<number> {
    const token = parseTokenArgs(ctx.args, ctx.deps.account.patAllowedScopes);
    ctx.log.info(
      { token_args: { name: token.name, scopes: token.scopes, expires_at: token.expiresAt } },
      'requesting token',
    );
    const answer = await postAccount<PersonalAccessTokenJson>(ctx, '/personal_access_token', {
      name: token.name,
      scopes: token.scopes,
      expires_at: token.expiresAt,
    });
    refusedUnlessSuccess(answer);
    const scopes = Array.isArray(answer.scopes) ? answer.scopes.filter((s) => typeof s === 'string') : [];
    ctx.io.stdout.write(
      `Token:   ${String(answer.token ?? '')}\nScopes:  ${scopes.join(',')}\nExpires: ${String(answer.expires_at ?? '')}\n`,
    );
    return 0;
  },
};

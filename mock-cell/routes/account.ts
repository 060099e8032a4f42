import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  type AccountActorJson,
  LFS_TOKEN_EXPIRES_IN,
  type LfsAuthenticateJson,
  type LfsAuthenticateRequestJson,
  type OtpCheckJson,
  type PersonalAccessTokenJson,
  type PersonalAccessTokenRequestJson,
  type RecoveryCodesJson,
} from '../../lib/contracts/account-api.js';
import type { CellContext } from '../context.js';
import { lfsToken } from '../git-http/derived-tokens.js';
import { type Actor, actorFromParams } from '../identity.js';
import { PAT_SCOPES, type PatScope } from '../tokens.js';

/**
 * The account endpoints of the internal API that gitlab-shell's `personal_access_token`,
 * `2fa_recovery_codes`, `2fa_verify` and `git-lfs-authenticate` call, with Rails' answers
 * (`lib/api/internal/base.rb`; contracts in `lib/contracts/account-api.ts`). Every mock user has
 * two-factor authentication enabled; OTP checks answer as GitLab CE does ("Feature is not
 * available", the OTP check is an EE feature).
 */
const RECOVERY_CODE_COUNT = 10;
const VALID_SCOPES = [...PAT_SCOPES].sort();

type Lookup = { actor: Actor } | { failure: { success: false; message: string } };

function lookupActor(ctx: CellContext, body: AccountActorJson): Lookup {
  const found = actorFromParams(ctx.model, {
    key_id: body.key_id,
    user_id: body.user_id === undefined ? undefined : String(body.user_id),
    username: body.username,
  });
  return found.ok ? { actor: found.actor } : { failure: { success: false, message: found.message } };
}

function parseDate(text: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const d = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text ? undefined : text;
}

function createToken(ctx: CellContext, body: PersonalAccessTokenRequestJson): PersonalAccessTokenJson {
  const who = lookupActor(ctx, body);
  if ('failure' in who) return who.failure;
  if (!body.name) return { success: false, message: 'No token name specified' };
  if (!Array.isArray(body.scopes) || body.scopes.length === 0)
    return { success: false, message: 'No token scopes specified' };
  const invalid = body.scopes.find((s) => !(PAT_SCOPES as readonly string[]).includes(s));
  if (invalid !== undefined) {
    const list = `[${VALID_SCOPES.map((s) => JSON.stringify(s)).join(', ')}]`;
    return { success: false, message: `Invalid scope: '${invalid}'. Valid scopes are: ${list}` };
  }
  const expiresAt = body.expires_at ? parseDate(body.expires_at) : null;
  if (expiresAt === undefined)
    return { success: false, message: `Invalid token expiry date: '${body.expires_at}'` };
  const { user } = who.actor;
  const { token, record } = ctx.tokens.mintPat(
    {
      name: body.name,
      userId: user.id,
      scopes: [...new Set(body.scopes as PatScope[])],
      expiresAt,
      cellId: ctx.cellId,
    },
    ctx.model.defaultOrganizationOf(user).id,
  );
  return { success: true, token, scopes: record.scopes, expires_at: record.expiresAt };
}

function recoveryCode(): string {
  return randomBytes(8).toString('hex');
}

export function registerAccountRoutes(scope: FastifyInstance, ctx: CellContext): void {
  scope.post<{ Body: PersonalAccessTokenRequestJson }>('/personal_access_token', async (req) => {
    const answer = createToken(ctx, req.body ?? {});
    if (answer.success)
      req.log.info({ cell: ctx.cell, scopes: answer.scopes }, 'personal access token created over SSH');
    return answer;
  });

  scope.post<{ Body: AccountActorJson }>(
    '/two_factor_recovery_codes',
    async (req): Promise<RecoveryCodesJson> => {
      const who = lookupActor(ctx, req.body ?? {});
      if ('failure' in who) return who.failure;
      // New codes replace the user's previous ones (the mock keeps no 2FA state to replace).
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, recoveryCode);
      req.log.info(
        { cell: ctx.cell, user: who.actor.user.username },
        'two-factor recovery codes regenerated',
      );
      return { success: true, recovery_codes: codes };
    },
  );

  const otpCheck = async (req: { body: AccountActorJson }): Promise<OtpCheckJson> => {
    const who = lookupActor(ctx, req.body ?? {});
    if ('failure' in who) return who.failure;
    return { success: false, message: 'Feature is not available' };
  };
  scope.post<{ Body: AccountActorJson }>('/two_factor_manual_otp_check', otpCheck);
  scope.post<{ Body: AccountActorJson }>('/two_factor_push_otp_check', otpCheck);

  scope.post<{ Body: LfsAuthenticateRequestJson }>('/lfs_authenticate', async (req, reply) => {
    const body = req.body ?? ({} as LfsAuthenticateRequestJson);
    const path = String(body.project ?? '')
      .replace(/^\/+/, '')
      .replace(/\.git$/, '');
    const project = ctx.model.projectByPath(path);
    // Without seed 000's shared model a cell has only its own projects, as a GitLab cell.
    const elsewhere =
      project && !ctx.model.seed000Routing() && ctx.model.cellOfProject(project).name !== ctx.cell;
    if (!project || elsewhere) return reply.code(404).send({ message: '404 Project Not Found' });
    const who = lookupActor(ctx, body);
    if ('failure' in who) return reply.code(404).send({ message: '404 User not found! Not Found' });
    const answer: LfsAuthenticateJson = {
      username: who.actor.user.username,
      // Accepted back as the Basic password on the project's LFS paths (git-http/credentials.ts).
      lfs_token: lfsToken(who.actor.user),
      repository_http_path: `${ctx.model.externalUrl}/${ctx.model.fullPath(project)}.git`,
      expires_in: LFS_TOKEN_EXPIRES_IN,
    };
    return answer;
  });
}

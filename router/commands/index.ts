/**
 * @file The command table: one module per SSH command, looked up by the name `ssh/command.ts`
 * parsed (gitlab-shell's `internal/command/command.go` → `internal/command/<name>/`).
 */
import type { CommandName } from '../ssh/command.js';
import type { Command } from './context.js';
import { discover } from './discover.js';
import { gitLfsAuthenticate } from './git-lfs-authenticate.js';
import { receivePack } from './git-receive-pack.js';
import { uploadArchive } from './git-upload-archive.js';
import { uploadPack } from './git-upload-pack.js';
import { personalAccessToken } from './personal-access-token.js';
import { twoFactorRecovery } from './two-factor-recovery.js';
import { twoFactorVerify } from './two-factor-verify.js';

export const COMMANDS: Readonly<Record<CommandName, Command>> = {
  discover,
  'git-upload-pack': uploadPack,
  'git-receive-pack': receivePack,
  'git-upload-archive': uploadArchive,
  personal_access_token: personalAccessToken,
  '2fa_recovery_codes': twoFactorRecovery,
  '2fa_verify': twoFactorVerify,
  'git-lfs-authenticate': gitLfsAuthenticate,
};

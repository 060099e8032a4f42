/**
 * @file The command table: one module per SSH command, looked up by the name `ssh/command.ts`
 * parsed (gitlab-shell's `internal/command/command.go` → `internal/command/<name>/`).
 */
import type { CommandName } from '../ssh/command.js';
import type { Command } from './context.js';
import { discover } from './discover.js';
import { receivePack } from './git-receive-pack.js';
import { uploadArchive } from './git-upload-archive.js';
import { uploadPack } from './git-upload-pack.js';

export const COMMANDS: Readonly<Record<CommandName, Command>> = {
  discover,
  'git-upload-pack': uploadPack,
  'git-receive-pack': receivePack,
  'git-upload-archive': uploadArchive,
};

/** `git-receive-pack '<path>'`: push, in two tunnel requests (`tunnel/git-command.ts`). */
import { gitCommand } from './git.js';

export const receivePack = gitCommand('git-receive-pack');

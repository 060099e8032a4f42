/** `git-upload-pack '<path>'`: clone and fetch. */
import { gitCommand } from './git.js';

export const uploadPack = gitCommand('git-upload-pack');

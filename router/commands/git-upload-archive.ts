/** `git-upload-archive '<path>'`: `git archive --remote`. */
import { gitCommand } from './git.js';

export const uploadArchive = gitCommand('git-upload-archive');

/**
 * What an SSH `exec` string asks for, parsed as GitLab Shell does: shell-like words, `git <verb>`
 * folded into `git-<verb>`, no words = the welcome message (`discover`).
 *
 * Outcomes and exit statuses follow gitlab-sshd: an unparsable line or an unknown command is refused
 * before anything runs (exit 128, "Failed to parse command: …" / "Unknown command: <line>"); a git
 * command without exactly one path argument fails as "Disallowed command" (exit 1). Shell operators
 * (`;`, `|`, …) are ordinary characters here: nothing is ever run by a shell.
 */
export type GitService = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

/** Commands that take their arguments as they come (each module checks its own usage). */
export type AccountCommand =
  | 'personal_access_token'
  | '2fa_recovery_codes'
  | '2fa_verify'
  | 'git-lfs-authenticate';

const ACCOUNT_COMMANDS: readonly string[] = [
  'personal_access_token',
  '2fa_recovery_codes',
  '2fa_verify',
  'git-lfs-authenticate',
];

/** Every command the router serves; each has its module in `router/commands/`. */
export type CommandName = 'discover' | GitService | AccountCommand;

/** A known command and the words after its name. */
export interface ParsedCommand {
  name: CommandName;
  args: string[];
}

export type CommandParseResult =
  | { ok: true; command: ParsedCommand }
  | { ok: false; exitCode: 1 | 128; message: string };

const GIT_SERVICES: readonly string[] = ['git-upload-pack', 'git-receive-pack', 'git-upload-archive'];

export function parseCommand(line: string): CommandParseResult {
  const words = splitShellWords(line);
  if (!words) {
    return {
      ok: false,
      exitCode: 128,
      message: 'Failed to parse command: Invalid SSH command: invalid command line string',
    };
  }
  const args = words.length > 1 && words[0] === 'git' ? [`git-${words[1]}`, ...words.slice(2)] : words;
  const name = args[0];
  if (name === undefined || name === 'discover') return { ok: true, command: { name: 'discover', args: [] } };
  if (ACCOUNT_COMMANDS.includes(name))
    return { ok: true, command: { name: name as AccountCommand, args: args.slice(1) } };
  if (!GIT_SERVICES.includes(name)) {
    return { ok: false, exitCode: 128, message: `Unknown command: ${line}` };
  }
  const repo = args[1];
  if (args.length !== 2 || repo === undefined) {
    return { ok: false, exitCode: 1, message: 'Disallowed command' };
  }
  return { ok: true, command: { name: name as GitService, args: [repo] } };
}

const SPACE = new Set([' ', '\t', '\n', '\r']);
/** Characters a backslash escapes inside double quotes (POSIX sh). */
const DQ_ESCAPABLE = new Set(['"', '\\', '$', '`', '\n']);

/**
 * Splits a command line into words: whitespace separates, '…' is literal, "…" allows \" \\ \$ \`,
 * a backslash outside quotes escapes the next character. Undefined when a quote is left open or the
 * line ends in a lone backslash.
 */
export function splitShellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && DQ_ESCAPABLE.has(line[i + 1] as string))
        word += line[++i];
      else word += c;
      continue;
    }
    if (SPACE.has(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') {
      if (i + 1 >= line.length) return undefined;
      word += line[++i];
    } else word += c;
  }
  if (quote) return undefined;
  if (inWord) words.push(word);
  return words;
}

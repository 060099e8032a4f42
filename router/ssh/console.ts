/**
 * GitLab Shell's console output on stderr: every line prefixed `remote: `; informational messages
 * (`gl_console_messages`) framed by blank `remote:` lines; warnings (every `ERROR: …`) boxed by
 * 72 `=` signs. Nothing is printed when every message is blank.
 */
const RULER = '='.repeat(72);

function line(message: string): string {
  return `remote: ${message}\n`;
}

function allBlank(messages: readonly string[]): boolean {
  return messages.every((m) => m.trim() === '');
}

export function formatInfoMessages(messages: readonly string[]): string {
  if (allBlank(messages)) return '';
  return line('') + messages.map(line).join('') + line('');
}

export function formatWarningMessages(messages: readonly string[]): string {
  if (allBlank(messages)) return '';
  const divider = line('') + line(RULER) + line('');
  return divider + messages.map(line).join('') + divider;
}

/**
 * gitlab-sshd's error output: it formats `ERROR: <message>\n` and then boxes it as a warning, so the
 * message line is followed by one empty (unprefixed) line.
 */
export function formatError(message: string): string {
  return formatWarningMessages([`ERROR: ${message}\n`]);
}

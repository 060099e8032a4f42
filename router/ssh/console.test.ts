import { describe, expect, it } from 'vitest';
import { formatError, formatInfoMessages, formatWarningMessages } from './console.js';

const RULER = '='.repeat(72);

describe('GitLab console output', () => {
  it('frames info messages with blank remote lines', () => {
    expect(formatInfoMessages(['something', 'here'])).toBe(
      'remote: \nremote: something\nremote: here\nremote: \n',
    );
  });

  it('boxes warnings with 72 = signs', () => {
    expect(formatWarningMessages(['something'])).toBe(
      `remote: \nremote: ${RULER}\nremote: \nremote: something\nremote: \nremote: ${RULER}\nremote: \n`,
    );
  });

  it('prints nothing when every message is blank', () => {
    expect(formatInfoMessages([' ', ''])).toBe('');
    expect(formatWarningMessages([])).toBe('');
  });

  it('formats errors as gitlab-sshd does, newline included', () => {
    expect(formatError('Disallowed command')).toBe(
      `remote: \nremote: ${RULER}\nremote: \nremote: ERROR: Disallowed command\n\nremote: \nremote: ${RULER}\nremote: \n`,
    );
  });
});

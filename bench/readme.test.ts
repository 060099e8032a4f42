import { describe, expect, it } from 'vitest';
import { BEGIN, END, spliceResults } from './readme.js';

describe('spliceResults', () => {
  it('replaces only what lies between the markers', () => {
    const readme = `# x\n\nintro\n${BEGIN}\nold table\n${END}\n\nafter\n`;
    const out = spliceResults(readme, '| new |\n');
    expect(out).toBe(`# x\n\nintro\n${BEGIN}\n\n| new |\n\n${END}\n\nafter\n`);
    expect(spliceResults(out, '| new |')).toBe(out);
  });

  it('refuses a README without the block', () => {
    expect(() => spliceResults('# x\n', 'y')).toThrow(/no <!-- bench-results:begin/);
  });
});

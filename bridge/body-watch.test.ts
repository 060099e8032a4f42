import { describe, expect, it } from 'vitest';
import { BodyWatch } from './body-watch.js';

describe('BodyWatch', () => {
  it('keeps the last 16 bytes across chunks, non-printable bytes as dots', () => {
    const w = new BodyWatch();
    w.add(Buffer.from('0032want 0123456789abcdef\n'));
    w.add(Buffer.from('0009done\n'));
    w.add(Buffer.from('0000'));
    expect(w.stdinTail).toBe('ef\n0009done\n0000');
    expect(w.bodyEnd).toBe('open-at-exit');
    w.end();
    expect(w.bodyEnd).toBe('before-exit');
    const pack = new BodyWatch();
    pack.add(Buffer.from([0x50, 0x41, 0x43, 0x4b, 0x00, 0xff]));
    expect(pack.stdinTail).toBe('PACK..');
  });
});

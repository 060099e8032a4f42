import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { encodeExitStatus, encodeFrame, ResponseFrame } from '../../lib/framing.js';
import { paceYoungGc } from '../../lib/yamux/young-gc.js';
import { relayResponse } from './response.js';

vi.mock('../../lib/yamux/young-gc.js', () => ({ paceYoungGc: vi.fn(), YOUNG_GC_PACE_BYTES: 4 << 20 }));

describe('relayResponse and the young generation', () => {
  it('counts every stdout byte relayed towards the paced young-generation collections', async () => {
    const body = new PassThrough();
    for (let i = 0; i < 20; i++) body.write(encodeFrame(ResponseFrame.stdout, Buffer.alloc(32 * 1024)));
    body.end(encodeExitStatus(0));
    const stdout = new PassThrough();
    stdout.resume();
    await relayResponse(body, true, { stdout, stderr: new PassThrough() });
    const counted = vi.mocked(paceYoungGc).mock.calls.reduce((sum, [bytes]) => sum + bytes, 0);
    expect(counted).toBe(20 * 32 * 1024);
    expect(vi.mocked(paceYoungGc).mock.calls.every(([, every]) => every === 4 << 20)).toBe(true);
  });
});

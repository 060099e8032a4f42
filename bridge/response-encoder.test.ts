import { describe, expect, it } from 'vitest';
import {
  checkResponseFrame,
  FrameReader,
  MAX_RESPONSE_FRAME_PAYLOAD,
  ResponseFrame,
} from '../lib/framing.js';
import { compatibleEncoder, framedEncoder } from './response-encoder.js';

const decode = (chunks: Buffer[]) => new FrameReader(checkResponseFrame).push(Buffer.concat(chunks));
const failure = { code: 'GITALY_INTERNAL', message: 'boom', compatText: 'Internal Server Error\n' };

describe('compatibleEncoder', () => {
  it('passes bytes through and appends the failure text', () => {
    const pieces = [Buffer.from('e'), Buffer.from('f')];
    const out = compatibleEncoder.output('stderr', pieces);
    expect(Buffer.concat(out).toString()).toBe('ef');
    expect(out[0]).toBe(pieces[0]);
    expect(compatibleEncoder.success(3)).toEqual([]);
    expect(Buffer.concat(compatibleEncoder.failure(failure, 1)).toString()).toBe('Internal Server Error\n');
    expect(compatibleEncoder.keepalive()).toBeUndefined();
  });
});

describe('framedEncoder', () => {
  it('frames stdout and stderr, splitting oversized chunks', () => {
    const big = Buffer.alloc(MAX_RESPONSE_FRAME_PAYLOAD + 10, 1);
    const frames = decode(framedEncoder.output('stdout', [big]));
    expect(frames.map((f) => [f.type, f.payload.length])).toEqual([
      [ResponseFrame.stdout, MAX_RESPONSE_FRAME_PAYLOAD],
      [ResponseFrame.stdout, 10],
    ]);
    expect(decode(framedEncoder.output('stderr', [Buffer.from('x')]))[0]?.type).toBe(ResponseFrame.stderr);
  });

  it('frames each piece of a run without copying it', () => {
    const a = Buffer.from('abc');
    const b = Buffer.from('de');
    const out = framedEncoder.output('stdout', [a, Buffer.alloc(0), b]);
    expect(out).toHaveLength(4);
    expect(out[1]).toBe(a);
    expect(out[3]).toBe(b);
    expect(decode(out)).toEqual([
      { type: ResponseFrame.stdout, payload: a },
      { type: ResponseFrame.stdout, payload: b },
    ]);
    expect(framedEncoder.output('stdout', [])).toEqual([]);
  });

  it('ends with the exit status', () => {
    const [f] = decode(framedEncoder.success(0));
    expect(f?.type).toBe(ResponseFrame.exitStatus);
    expect(f?.payload.readInt32BE(0)).toBe(0);
  });

  it('reports a failure as an error frame then the last exit status, or 1', () => {
    const withExit = decode(framedEncoder.failure(failure, 128));
    expect(withExit.map((f) => f.type)).toEqual([ResponseFrame.error, ResponseFrame.exitStatus]);
    expect(JSON.parse(withExit[0]?.payload.toString() ?? '')).toEqual({
      code: 'GITALY_INTERNAL',
      message: 'boom',
    });
    expect(withExit[1]?.payload.readInt32BE(0)).toBe(128);
    expect(decode(framedEncoder.failure(failure, undefined))[1]?.payload.readInt32BE(0)).toBe(1);
  });

  it('has an empty keepalive frame', () => {
    const ka = framedEncoder.keepalive();
    expect(ka && decode([ka])).toEqual([{ type: ResponseFrame.keepalive, payload: Buffer.alloc(0) }]);
  });
});

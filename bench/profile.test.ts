import { describe, expect, it } from 'vitest';
import { areaOf, summarizeProfile } from './profile.js';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

describe('areaOf', () => {
  it('groups frames by npm package, Node module and our own folders', () => {
    expect(areaOf(frame('f', 'file:///w/node_modules/@grpc/grpc-js/build/src/call.js'))).toBe(
      '@grpc/grpc-js',
    );
    expect(areaOf(frame('f', 'file:///w/node_modules/ssh2/lib/Channel.js'))).toBe('ssh2');
    expect(areaOf(frame('f', 'node:internal/http2/core'))).toBe('node:http2');
    expect(areaOf(frame('f', 'node:buffer'))).toBe('node:buffer');
    expect(areaOf(frame('f', 'file:///w/dist/bridge/tunnel.js'))).toBe('bridge/');
    expect(areaOf(frame('(garbage collector)'))).toBe('(garbage collector)');
    expect(areaOf(frame('writev'))).toBe('(native)');
  });
});

describe('summarizeProfile', () => {
  it('attributes sample time to functions and areas, leaving idle time out', () => {
    const profile = {
      startTime: 0,
      endTime: 10_000,
      nodes: [
        { id: 1, callFrame: frame('(root)') },
        { id: 2, callFrame: frame('(idle)') },
        { id: 3, callFrame: frame('encode', 'file:///w/node_modules/protobufjs/src/writer.js', 9) },
        { id: 4, callFrame: frame('pump', 'file:///w/dist/bridge/tunnel.js', 41) },
      ],
      // Each sample is followed by 1 ms: idle 4 ms, encode 3 ms, pump 1 ms (the last sample has no gap).
      samples: [2, 2, 2, 2, 3, 3, 3, 4, 3],
      timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
    };
    const s = summarizeProfile(profile, 'bridge', 42);
    expect(s.busySeconds).toBeCloseTo(0.004);
    expect(s.areas[0]).toMatchObject({ area: 'protobufjs', share: 0.75 });
    expect(s.functions.map((f) => f.fn)).toEqual([
      'encode protobufjs/src/writer.js:10',
      'pump bridge/tunnel.js:42',
    ]);
    expect(s.seconds).toBeCloseTo(0.01);
  });
});

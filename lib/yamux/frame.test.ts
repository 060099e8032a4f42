import { describe, expect, it } from 'vitest';
import { FrameDecoder, parseHeader } from './decoder.js';
import { YamuxError } from './errors.js';
import { describeHeader, encodeHeader, Flag, type FrameHeader, FrameType, HEADER_SIZE } from './frame.js';

function collect(opts?: { maxDataLength?: (id: number) => number }) {
  const events: Array<{ header: FrameHeader } | { id: number; data: string; last: boolean }> = [];
  const decoder = new FrameDecoder(
    {
      header: (header) => events.push({ header }),
      data: (id, chunk, last) => events.push({ id, data: chunk.toString('latin1'), last }),
    },
    opts,
  );
  return { events, decoder };
}

describe('encodeHeader', () => {
  it('writes the 12-byte big-endian header (golden: WindowUpdate SYN stream 1 delta 0)', () => {
    const b = encodeHeader({ type: FrameType.WindowUpdate, flags: Flag.SYN, streamId: 1, length: 0 });
    expect(b.toString('hex')).toBe('000100010000000100000000');
    expect(b.length).toBe(HEADER_SIZE);
  });

  it('encodes the 16 MiB server grant on ACK', () => {
    const b = encodeHeader({ type: FrameType.WindowUpdate, flags: Flag.ACK, streamId: 1, length: 0xfc0000 });
    expect(b.toString('hex')).toBe('000100020000000100fc0000');
  });

  it('round-trips through parseHeader', () => {
    const h = { type: FrameType.GoAway, flags: 0xffff, streamId: 0xffffffff, length: 0xfffffffe } as const;
    expect(parseHeader(encodeHeader(h))).toEqual({ version: 0, ...h });
  });

  it('rejects fields that do not fit', () => {
    expect(() => encodeHeader({ type: FrameType.Data, flags: 0, streamId: 2 ** 32, length: 0 })).toThrow(
      RangeError,
    );
  });

  it('describes headers for traces', () => {
    expect(describeHeader({ type: FrameType.Data, flags: Flag.SYN | Flag.FIN, streamId: 3, length: 5 })).toBe(
      'Data[SYN,FIN] id=3 len=5',
    );
  });
});

describe('FrameDecoder', () => {
  const data = (id: number, payload: string, flags = 0) =>
    Buffer.concat([
      encodeHeader({ type: FrameType.Data, flags, streamId: id, length: payload.length }),
      Buffer.from(payload, 'latin1'),
    ]);

  it('streams a Data payload in pieces as it arrives', () => {
    const { events, decoder } = collect();
    const bytes = data(1, 'hello world');
    decoder.push(bytes.subarray(0, 5));
    expect(events).toEqual([]);
    decoder.push(bytes.subarray(5, 15));
    decoder.push(bytes.subarray(15));
    expect(events).toEqual([
      { header: { version: 0, type: 0, flags: 0, streamId: 1, length: 11 } },
      { id: 1, data: 'hel', last: false },
      { id: 1, data: 'lo world', last: true },
    ]);
  });

  it('yields header() for zero-length Data and no data() call', () => {
    const { events, decoder } = collect();
    decoder.push(Buffer.concat([data(1, '', Flag.FIN), data(3, 'x')]));
    expect(events).toEqual([
      { header: { version: 0, type: 0, flags: Flag.FIN, streamId: 1, length: 0 } },
      { header: { version: 0, type: 0, flags: 0, streamId: 3, length: 1 } },
      { id: 3, data: 'x', last: true },
    ]);
  });

  it('treats the length of non-Data frames as a value, not a payload', () => {
    const { events, decoder } = collect();
    decoder.push(encodeHeader({ type: FrameType.Ping, flags: Flag.SYN, streamId: 0, length: 0xffffffff }));
    decoder.push(data(1, 'a'));
    expect(events).toHaveLength(3);
  });

  it('throws typed errors for a bad version or type and stays failed', () => {
    const bad = encodeHeader({ type: FrameType.Data, flags: 0, streamId: 1, length: 0 });
    bad[0] = 1;
    const { decoder } = collect();
    expect(() => decoder.push(bad)).toThrow(expect.objectContaining({ code: 'YAMUX_BAD_VERSION' }));
    expect(() => decoder.push(data(1, 'x'))).toThrow(expect.objectContaining({ code: 'YAMUX_BAD_VERSION' }));
    const badType = Buffer.from('000400000000000000000000', 'hex');
    expect(() => collect().decoder.push(badType)).toThrow(
      expect.objectContaining({ code: 'YAMUX_BAD_TYPE' }),
    );
  });

  it('checks Data against maxDataLength after header()', () => {
    const asked: number[] = [];
    const { events, decoder } = collect({
      maxDataLength: (id) => {
        asked.push(id);
        return 4;
      },
    });
    decoder.push(data(5, 'abcd'));
    let err: unknown;
    try {
      decoder.push(data(5, 'abcde'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(YamuxError);
    expect((err as YamuxError).code).toBe('YAMUX_WINDOW_EXCEEDED');
    expect(asked).toEqual([5, 5]);
    expect(events.filter((e) => 'header' in e)).toHaveLength(2);
  });

  it('propagates a handler exception and stays failed', () => {
    const decoder = new FrameDecoder({
      header: () => {
        throw new Error('boom');
      },
      data: () => undefined,
    });
    expect(() => decoder.push(data(1, 'x'))).toThrow('boom');
    expect(() => decoder.push(Buffer.alloc(0))).toThrow('boom');
  });
});

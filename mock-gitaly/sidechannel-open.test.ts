import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RpcError } from './errors.js';
import { sidechannelId, wrongSidechannelId } from './sidechannel-open.js';
import { goQuote } from './upload-pack-sidechannel.js';

function md(...ids: string[]): Metadata {
  const m = new Metadata();
  for (const id of ids) m.add('gitaly-sidechannel-id', id);
  return m;
}

describe('sidechannelId (Gitaly OpenSidechannel)', () => {
  it('takes the last value, as a signed 64-bit decimal', () => {
    expect(sidechannelId(md('1', '2', '42'))).toBe(42n);
    expect(sidechannelId(md('9223372036854775807'))).toBe(9223372036854775807n);
    expect(sidechannelId(md('-3'))).toBe(-3n);
  });

  it('gives 0 for what Go’s strconv.ParseInt refuses (the error is ignored there)', () => {
    expect(sidechannelId(md('x1'))).toBe(0n);
    expect(sidechannelId(md('9223372036854775808'))).toBe(0n);
    expect(sidechannelId(md(''))).toBe(0n);
  });

  it('without the key: INTERNAL with Gitaly’s text', () => {
    let err: unknown;
    try {
      sidechannelId(new Metadata());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).message).toBe(
      'opennig sidechannel: sidechannel: sidechannel-id not found in incoming metadata',
    );
  });

  it('a wrong id is another valid int64, never the same', () => {
    for (const id of [0n, 1n, -1n, 9223372036854775807n]) {
      const wrong = wrongSidechannelId(id);
      expect(wrong).not.toBe(id);
      expect(BigInt.asIntN(64, wrong)).toBe(wrong);
    }
  });
});

describe('goQuote (Go %q, as Gitaly quotes git stderr)', () => {
  it('escapes like Go', () => {
    expect(goQuote("fatal: unknown capability 'foobar'\n")).toBe(`"fatal: unknown capability 'foobar'\\n"`);
    expect(goQuote('a"b\\c\td\r\u0001\u007f')).toBe('"a\\"b\\\\c\\td\\r\\x01\\x7f"');
    expect(goQuote('grüße')).toBe('"grüße"');
  });
});

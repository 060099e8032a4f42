import { describe, expect, it } from 'vitest';
import { DELIM_PKT, encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { NegotiationStatsParser } from './negotiation-stats.js';

const OID = 'a'.repeat(40);

function parse(...chunks: Buffer[]) {
  const parser = new NegotiationStatsParser();
  for (const chunk of chunks) parser.feed(chunk);
  return parser.result;
}

describe('NegotiationStatsParser (Gitaly ParsePackfileNegotiation)', () => {
  it('a v0 clone: want with caps, flush, done → packets 2 (done counts in the payload only)', () => {
    const stats = parse(encodePkt(`want ${OID} multi_ack side-band-64k\n`), FLUSH_PKT, encodePkt('done\n'));
    expect(stats).toEqual({
      payload_size: `want ${OID} multi_ack side-band-64k`.length + 'done'.length,
      packets: 2,
      caps: ['multi_ack', 'side-band-64k'],
      wants: 1,
      haves: 0,
      shallows: 0,
      deepen: '',
      filter: '',
    });
  });

  it('a v2 fetch: command and agent count as packets, delim too; shallow, deepen, filter, haves', () => {
    const stats = parse(
      Buffer.concat([
        encodePkt('command=fetch\n'),
        encodePkt('agent=git/2.39.5\n'),
        encodePkt('object-format=sha1\n'),
        DELIM_PKT,
        encodePkt(`want ${OID}\n`),
        encodePkt(`want ${'b'.repeat(40)}\n`),
        encodePkt(`shallow ${OID}\n`),
        encodePkt('deepen 1\n'),
        encodePkt('filter blob:none\n'),
        encodePkt(`have ${OID}\n`),
        encodePkt('done\n'),
        encodePkt('ignored after done\n'),
      ]),
    );
    expect(stats).toMatchObject({
      packets: 10,
      caps: [],
      wants: 2,
      haves: 1,
      shallows: 1,
      deepen: 'deepen 1',
      filter: 'blob:none',
    });
  });

  it('counts the same whatever the chunking', () => {
    const bytes = Buffer.concat([encodePkt(`want ${OID} ofs-delta\n`), FLUSH_PKT, encodePkt('done\n')]);
    const whole = parse(bytes);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(parse(bytes.subarray(0, cut), bytes.subarray(cut))).toEqual(whole);
    }
    expect(parse(...[...bytes].map((b) => Buffer.from([b])))).toEqual(whole);
  });

  it('stops at a malformed line or bytes that are not pkt-lines, keeping what it had', () => {
    expect(
      parse(encodePkt(`want ${OID} a\n`), encodePkt(`want ${OID} b\n`), encodePkt(`have ${OID}\n`)),
    ).toMatchObject({ packets: 1, wants: 1, caps: ['a'], haves: 0 });
    expect(parse(encodePkt('want\n'), FLUSH_PKT)).toMatchObject({ packets: 0, wants: 0 });
    expect(parse(FLUSH_PKT, Buffer.from('zzzz'), FLUSH_PKT)).toMatchObject({ packets: 1 });
  });

  it('nothing, or a lone flush of the sidechannel, gives zeros', () => {
    expect(parse()).toMatchObject({ packets: 0, payload_size: 0, wants: 0, caps: [] });
  });
});

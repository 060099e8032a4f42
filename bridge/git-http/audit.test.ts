import { describe, expect, it } from 'vitest';
import { packfileStatsJson } from './audit.js';

describe('packfileStatsJson', () => {
  it('writes the statistics as Go’s encoding/json does with omitempty: int64 as numbers, zeros left out', () => {
    expect(
      packfileStatsJson({
        payload_size: '312',
        packets: '7',
        caps: ['multi_ack_detailed', 'agent=git/2.39.5'],
        wants: '2',
        haves: '0',
        shallows: '0',
        deepen: 'deepen 1',
        filter: '',
      }),
    ).toEqual({
      payload_size: 312,
      packets: 7,
      caps: ['multi_ack_detailed', 'agent=git/2.39.5'],
      wants: 2,
      deepen: 'deepen 1',
    });
    expect(packfileStatsJson({})).toEqual({});
  });
});

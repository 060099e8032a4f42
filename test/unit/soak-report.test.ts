import { describe, expect, it } from 'vitest';
import { nodeFlagsFor } from '../../stack/node-flags.js';
import { renderSoak } from '../soak/report.js';
import type { Sample } from '../soak/sampler.js';

/** A service sampled every minute for 12 minutes whose old space fills by `oldPerMinute` MiB a minute. */
function series(service: string, oldPerMinute: number): Sample[] {
  return Array.from({ length: 13 }, (_, minute) => {
    const old = 10 + oldPerMinute * minute;
    // A mark-compact at minute 8: the heap used drops to the live heap, the committed pages stay.
    const used = minute === 8 ? 11 : 11 + oldPerMinute * minute;
    return {
      minute,
      service,
      pid: 1,
      rssMiB: 50 + old,
      heapUsedMiB: used,
      fds: 20,
      sockets: 4,
      detail: {
        anon: 15 + old,
        file: 40,
        heap: 12 + old,
        newSpace: 1,
        oldSpace: old,
        codeSpace: 1,
        native: 3,
      },
    };
  });
}

const summary = (samples: Sample[]) => ({
  minutes: 12,
  startedAt: '2026-12-01T00:00:00.000Z',
  results: [],
  samples,
  steadyFrom: 4,
  missingPushes: [],
  svgName: 'soak-rss.svg',
  limitPercent: 10,
  sampleSeconds: 60,
  workers: 2,
});

describe('the soak report', () => {
  it('says where the RSS went and shows the live heap of each half', () => {
    const { text, violations } = renderSoak(summary([...series('gitaly', 2), ...series('router', 0)]));
    // gitaly: RSS 70 → 82 (means of 3), all of it old space; the live heap after the mark-compact.
    expect(text).toContain('| gitaly | +12.0 | +12.0 | +0.0 | +0.0 | +0.0 | +0.0 | 19.0 → 11.0 |');
    expect(text).toContain('| router | +0.0 | +0.0 | +0.0 | +0.0 | +0.0 | +0.0 | 11.0 → 11.0 |');
    expect(violations).toEqual(['gitaly RSS grew +17.1 %']);
  });

  it('leaves the breakdown n/a where a service had no probe', () => {
    const bare = series('x', 0).map(({ detail: _, ...s }) => s);
    expect(renderSoak(summary(bare)).text).toContain('| x | +0.0 | n/a | n/a | n/a | n/a | n/a |');
  });
});

describe('the services’ node flags', () => {
  it('gives mock Gitaly and the mock Rails the small old-generation step, the data path only the young-generation cap', () => {
    expect(nodeFlagsFor('mock-gitaly')).toEqual(['--optimize-for-size']);
    expect(nodeFlagsFor('mock-cell')).toEqual(['--optimize-for-size']);
    expect(nodeFlagsFor('router')).toEqual(['--max-semi-space-size=2', '--heap-growing-percent=300']);
    expect(nodeFlagsFor('bridge')).toEqual(['--max-semi-space-size=2']);
    expect(nodeFlagsFor('topology-service')).toEqual([]);
  });
});

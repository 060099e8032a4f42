import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError, WORKLOADS } from './options.js';

describe('parseArgs', () => {
  it('runs every workload at full size by default', () => {
    const o = parseArgs([]);
    expect(o.mode).toBe('full');
    expect([...o.only]).toEqual([...WORKLOADS]);
    expect(o.sequentialClones).toBe(200);
    expect(o.concurrency).toEqual([50, 500]);
    expect(o.historyRepo.history?.commits).toBeGreaterThanOrEqual(1000);
    expect(o.largeRepo.files * o.largeRepo.fileBytes).toBeGreaterThanOrEqual(200 * 1024 * 1024);
    expect(o.slowRepo.files * o.slowRepo.fileBytes).toBeGreaterThanOrEqual(1024 * 1024 * 1024);
    expect(o.pushObjects.files * o.pushObjects.fileBytes).toBe(100 * 1024 * 1024);
  });

  it('shrinks everything with --quick and keeps --profile and --only', () => {
    const o = parseArgs(['--quick', '--profile', '--only', 'push,memory']);
    expect(o.mode).toBe('quick');
    expect(o.profile).toBe(true);
    expect([...o.only]).toEqual(['push', 'memory']);
    expect(o.sequentialClones).toBeLessThan(50);
    expect(o.largeRepo.files * o.largeRepo.fileBytes).toBeLessThan(64 * 1024 * 1024);
    expect([...parseArgs(['--only=throughput']).only]).toEqual(['throughput']);
  });

  it('takes the router leg to the cells, http1 or h2c (unset: the router default)', () => {
    expect(parseArgs([]).cellProtocol).toBeUndefined();
    expect(parseArgs(['--cell-protocol', 'h2c']).cellProtocol).toBe('h2c');
    expect(() => parseArgs(['--cell-protocol', 'h2'])).toThrow(/http1 or h2c/);
    expect(parseArgs(['--quick', '--large-clone-runs', '4']).largeCloneRuns).toBe(4);
    expect(() => parseArgs(['--large-clone-runs', '0'])).toThrow(/positive integer/);
  });

  it('sizes fcgiwrap for the highest concurrency level unless --fcgi-children says otherwise', () => {
    expect(parseArgs([]).fcgiChildren).toBe(Math.max(...parseArgs([]).concurrency));
    expect(parseArgs(['--quick']).fcgiChildren).toBe(Math.max(...parseArgs(['--quick']).concurrency));
    expect(parseArgs(['--fcgi-children', '32']).fcgiChildren).toBe(32);
    expect(() => parseArgs(['--fcgi-children', '0'])).toThrow(/positive integer/);
    expect(() => parseArgs(['--fcgi-children'])).toThrow(/positive integer/);
  });

  it('refuses unknown arguments and workloads', () => {
    expect(() => parseArgs(['--fast'])).toThrow(UsageError);
    expect(() => parseArgs(['--only', 'clone'])).toThrow(/unknown workload/);
    expect(() => parseArgs(['--only'])).toThrow(/needs a list/);
  });
});

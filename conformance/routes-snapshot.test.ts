import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROUTES as FIXTURE } from '../test/conformance/fixtures/routes.js';
import { readRoutesSnapshot, snapshotCases } from './routes-snapshot.js';

const dir = mkdtempSync(join(tmpdir(), 'routes-snapshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the routes snapshot H6 replays', () => {
  it('asks each example and dotted example, with .json when the row accepts a format, the root left out', () => {
    const cases = snapshotCases([
      { template: '/', example: '/' },
      { template: '/*id', example: '/foo/bar', acceptsFormat: true, dottedExample: '/john.doe/bar' },
      { template: '/:username', example: '/foo', acceptsFormat: true, dottedExample: '/john.doe' },
      { template: '/help', example: '/help' },
      { template: '(/-/jira)/*namespace_id/:project_id', example: '/-/jira/foo/bar/foo' },
    ]);
    expect(cases.map((c) => [c.path, c.lead])).toEqual([
      ['/foo/bar', { kind: 'namespace', claim: 'foo' }],
      ['/foo/bar.json', { kind: 'namespace', claim: 'foo' }],
      ['/john.doe/bar', { kind: 'namespace', claim: 'john.doe' }],
      ['/john.doe/bar.json', { kind: 'namespace', claim: 'john.doe' }],
      ['/foo', { kind: 'namespace', claim: 'foo' }],
      ['/foo.json', { kind: 'namespace', claim: 'foo' }],
      ['/john.doe', { kind: 'namespace', claim: 'john.doe' }],
      ['/john.doe.json', { kind: 'namespace', claim: 'john.doe' }],
      ['/help', { kind: 'word', word: 'help' }],
      ['/-/jira/foo/bar/foo', { kind: 'word', word: '-' }],
    ]);
  });

  it('reads the kit’s test snapshot, and names the row a broken file gets wrong', () => {
    expect(snapshotCases(readRoutesSnapshot(FIXTURE)).length).toBe(42);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ template: '/', example: '/' }, { template: '/x' }]));
    expect(() => readRoutesSnapshot(bad)).toThrow(
      `${bad}: row 1 is not {template, example, acceptsFormat?, dottedExample?}`,
    );
    writeFileSync(bad, '{}');
    expect(() => readRoutesSnapshot(bad)).toThrow(`${bad}: not a JSON array of routes`);
  });
});

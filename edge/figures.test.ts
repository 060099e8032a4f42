import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EdgeFileError, edgeFigures, resolveEdge } from './figures.js';

const dir = mkdtempSync(join(tmpdir(), 'edge-figures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe('edge figures', () => {
  it("cloudflare is nginx with the doc's 15 s idle connection and ~60 s idle body, scaled by timeScale", () => {
    expect(edgeFigures('cloudflare')).toMatchObject({
      proxy: 'nginx',
      idleTimeoutMs: 15_000,
      idleBodyTimeoutMs: 60_000,
      bufferSshPackBody: false,
    });
    const scaled = resolveEdge('cloudflare', 0.1);
    expect(scaled).toMatchObject({
      kind: 'cloudflare',
      figures: { idleTimeoutMs: 1500, idleBodyTimeoutMs: 6000 },
    });
  });

  it('haproxy takes its client and server timeouts from the idle figure unless given', () => {
    expect(edgeFigures('haproxy')).toMatchObject({
      haproxyTimeoutClientMs: 90_000,
      haproxyTimeoutServerMs: 90_000,
    });
    expect(edgeFigures('haproxy', { haproxyTimeoutServerMs: 5000, timeScale: 0.5 })).toMatchObject({
      haproxyTimeoutClientMs: 45_000,
      haproxyTimeoutServerMs: 2500,
    });
  });

  it('none runs nothing', () => {
    expect(resolveEdge('none')).toEqual({ kind: 'none' });
  });

  it("an edge file overrides its base's figures; its own timeScale and the caller's multiply", () => {
    const path = file('before-fix.json', {
      version: 1,
      base: 'cloudflare',
      bufferSshPackBody: true,
      timeScale: 0.5,
      maxBodyBytes: 1024,
    });
    expect(resolveEdge(path, 0.2)).toEqual({
      kind: 'file',
      file: path,
      figures: expect.objectContaining({
        proxy: 'nginx',
        timeScale: 0.1,
        idleTimeoutMs: 1500,
        bufferSshPackBody: true,
        maxBodyBytes: 1024,
      }),
    });
  });

  it('a bad edge file names every problem; an unknown word is neither a kind nor a file', () => {
    const bad = file('bad.json', { version: 2, idleTimeoutMs: -1, base: 'envoy', colour: 'red' });
    let err: unknown;
    try {
      resolveEdge(bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EdgeFileError);
    const problems = (err as EdgeFileError).problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        'version: must be 1',
        'idleTimeoutMs: must be >= 1',
        'base: must be one of "nginx", "haproxy", "cloudflare"',
        'colour: is not a known field',
      ]),
    );
    expect(() => resolveEdge('envoy')).toThrow(/not an edge kind \(none, nginx, haproxy, cloudflare\)/);
    expect(() => resolveEdge(join(dir, 'missing.json'))).toThrow(/cannot read it as JSON/);
    expect(() => resolveEdge('nginx', 0)).toThrow(/time scale must be > 0/);
  });
});

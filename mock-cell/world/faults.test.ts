import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { ControlArgumentError } from '../../lib/world-channel.js';
import { demoModel, shellHeaders, testApp } from '../test-support/fixtures.js';
import { FaultTable, parseFaultSpec } from './faults.js';
import { RailsWorld } from './rails-world.js';

const entries: JournalDraft[] = [];
const world = new RailsWorld((e) => entries.push(e));
const model = demoModel();
const eu0 = testApp(model, 'cell_eu0', { world });
afterAll(async () => {
  await eu0.close();
});

const allowedBody = {
  action: 'git-upload-pack',
  project: 'my-company/my-project.git',
  key_id: 2,
  protocol: 'ssh',
};

describe('parseFaultSpec', () => {
  it.each([
    [{}, /endpoint/],
    [{ endpoint: 'api' }, /endpoint/],
    [{ endpoint: '/x' }, /needs status/],
    [{ endpoint: '/x', status: 700 }, /status/],
    [{ endpoint: '/x', status: 503, reset: true }, /one of/],
    [{ endpoint: '/x', redirect: { status: 200, location: '/y' } }, /3xx/],
    [{ endpoint: '/x', redirect: { status: 301 } }, /location/],
    [{ endpoint: '/x', latencyMs: -1 }, /latencyMs/],
    [{ endpoint: '/x', status: 500, times: 0 }, /times/],
    [{ endpoint: '/x', status: 500, headers: { a: {} } }, /headers\.a/],
    [{ endpoint: '/x', status: 500, method: 'GET /' }, /method/],
  ])('refuses %j', (args, message) => {
    expect(() => parseFaultSpec(args as Record<string, unknown>)).toThrow(ControlArgumentError);
    expect(() => parseFaultSpec(args as Record<string, unknown>)).toThrow(message);
  });

  it('turns retryAfter into a Retry-After header and upper-cases the method', () => {
    expect(parseFaultSpec({ endpoint: '/x', status: 503, retryAfter: 60, method: 'post' })).toEqual({
      endpoint: '/x',
      method: 'POST',
      status: 503,
      headers: { 'retry-after': '60' },
    });
  });
});

describe('FaultTable', () => {
  it('matches exact paths, prefixes ending in *, the method, and counts times', () => {
    const t = new FaultTable('c');
    t.add({ endpoint: '/a', status: 500, times: 2 });
    t.add({ endpoint: '/b/*', method: 'POST', status: 502 });
    expect(t.take('GET', '/a/more')).toBeUndefined();
    expect(t.take('GET', '/a')?.status).toBe(500);
    expect(t.take('GET', '/a')?.status).toBe(500);
    expect(t.take('GET', '/a')).toBeUndefined();
    expect(t.take('GET', '/b/c')).toBeUndefined();
    expect(t.take('POST', '/b/c')?.status).toBe(502);
    expect(t.clear()).toBe(1);
    expect(t.take('POST', '/b/c')).toBeUndefined();
  });
});

describe('faults on a cell', () => {
  it('answers the programmed status, JSON body and headers before authentication, then the real answer', async () => {
    world.faultsOf('cell_eu0').add(
      parseFaultSpec({
        endpoint: '/api/v4/internal/allowed',
        status: 503,
        body: { message: 'down' },
        retryAfter: 60,
        times: 1,
      }),
    );
    const faulted = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      payload: allowedBody,
    });
    expect(faulted.statusCode).toBe(503);
    expect(faulted.headers['retry-after']).toBe('60');
    expect(faulted.headers['content-type']).toMatch(/^application\/json/);
    expect(faulted.json()).toEqual({ message: 'down' });
    expect(entries.at(-1)).toMatchObject({
      status: 503,
      fault: { kind: 'answer', endpoint: '/api/v4/internal/allowed' },
    });
    const real = await eu0.inject({
      method: 'POST',
      url: '/api/v4/internal/allowed',
      headers: await shellHeaders(),
      payload: allowedBody,
    });
    expect(real.statusCode).toBe(200);
    expect(entries.at(-1)?.fault).toBeUndefined();
  });

  it('answers a redirect with Location, text bodies as text, and delays with latencyMs alone', async () => {
    const faults = world.faultsOf('cell_eu0');
    faults.add(
      parseFaultSpec({
        endpoint: '/api/v4/internal/authorized_keys',
        redirect: { status: 301, location: 'http://elsewhere.test/x' },
        times: 1,
      }),
    );
    const moved = await eu0.inject({ method: 'GET', url: '/api/v4/internal/authorized_keys?key=AAAA' });
    expect(moved.statusCode).toBe(301);
    expect(moved.headers.location).toBe('http://elsewhere.test/x');
    faults.add(parseFaultSpec({ endpoint: '/my-company/*', status: 500, body: 'boom', times: 1 }));
    const text = await eu0.inject({ method: 'POST', url: '/my-company/my-project.git/ssh-upload-pack' });
    expect(text.statusCode).toBe(500);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body).toBe('boom');
    faults.add(parseFaultSpec({ endpoint: '/api/v4/internal/check', latencyMs: 150, times: 1 }));
    const started = Date.now();
    const slow = await eu0.inject({
      method: 'GET',
      url: '/api/v4/internal/check',
      headers: await shellHeaders(),
    });
    expect(slow.statusCode).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(entries.at(-1)).toMatchObject({ status: 200, fault: { kind: 'latency' } });
  });

  it('resets the connection without an answer', async () => {
    const app = testApp(model, 'cell_us0', { world });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      world
        .faultsOf('cell_us0')
        .add(parseFaultSpec({ endpoint: '/api/v4/internal/discover', reset: true, times: 1 }));
      const { port } = app.server.address() as AddressInfo;
      const before = entries.length;
      await expect(fetch(`http://127.0.0.1:${port}/api/v4/internal/discover?key_id=2`)).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 100));
      expect(entries.slice(before).map((e) => e.status)).toEqual(['reset']);
      expect(entries.at(-1)).toMatchObject({ cell: 'cell_us0', status: 'reset', fault: { kind: 'reset' } });
      const after = await fetch(`http://127.0.0.1:${port}/api/v4/internal/discover?key_id=2`);
      expect(after.status).toBe(401);
    } finally {
      await app.close();
    }
  });
});

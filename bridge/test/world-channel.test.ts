import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompiledPrograms, compilePrograms } from '../../test/helpers/programs.js';
import { startWithWorldChannel, type WorldChild } from '../../test/helpers/world-channel.js';
import { writeSecret } from '../test-support/harness.js';

/** `bridge/main.ts` as its own process with a world channel, in front of a stand-in Rails. */
let programs: CompiledPrograms;
let bridge: WorldChild;
let rails: http.Server;
let dir: string;
let urls: { main: string; shell: string };

beforeAll(async () => {
  programs = await compilePrograms(['bridge/main.ts']);
  dir = mkdtempSync(join(tmpdir(), 'bridge-world-'));
  rails = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('rails says hi\n'),
  );
  await new Promise<void>((resolve) => rails.listen(0, '127.0.0.1', resolve));
  const config = {
    listen: '127.0.0.1:0',
    shellListen: '127.0.0.1:0',
    railsUrl: `http://127.0.0.1:${(rails.address() as AddressInfo).port}`,
    shellSecretFile: writeSecret(dir, 'shell', 'shell-secret'),
    workhorseSecretFile: writeSecret(dir, 'workhorse', 'workhorse-secret'),
    cell: 'cell_w2',
  };
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  bridge = startWithWorldChannel(programs.path('bridge/main.ts'), file);
  const listening = await bridge.listening;
  urls = { main: String(listening.listen), shell: String(listening.shell) };
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await new Promise((resolve) => rails?.close(resolve));
  programs?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('bridge over a world channel', () => {
  it('journals a refused tunnel and a proxied request with the cell and the listener', async () => {
    const refused = await fetch(`${urls.main}/g/p.git/ssh-receive-pack`, {
      method: 'POST',
      headers: { 'gitlab-shell-api-request': 'a.b.c', 'git-protocol': 'version=2' },
      body: 'x',
    });
    expect(refused.status).toBe(404);
    const proxied = await fetch(`${urls.shell}/users/sign_in`);
    expect(await proxied.text()).toBe('rails says hi\n');
    const [tunnel, proxy] = await bridge.entries((e) => e.service === 'bridge', 2);
    expect(tunnel).toMatchObject({
      cell: 'cell_w2',
      endpoint: 'POST /g/p.git/ssh-receive-pack',
      status: 404,
      headers: { 'gitlab-shell-api-request': '[redacted]', 'git-protocol': 'version=2' },
      fields: { listener: 'main', route: 'ssh_receive_pack', project: 'g/p' },
    });
    expect(proxy).toMatchObject({
      cell: 'cell_w2',
      endpoint: 'GET /users/sign_in',
      status: 200,
      bytesOut: 'rails says hi\n'.length,
      fields: { listener: 'shell', route: 'proxy' },
    });
  });

  it('has no control ops of its own beyond world clockSkew', async () => {
    expect(await bridge.ok('world', 'clockSkew', { ms: 1500 })).toEqual({ service: 'bridge', skewMs: 1500 });
    expect(await bridge.ok('world', 'clockSkew', { ms: 0 })).toEqual({ service: 'bridge', skewMs: 0 });
    expect(await bridge.control('bridge', 'fault', {})).toMatchObject({
      ok: false,
      error: 'unknown control op bridge fault',
    });
  });
});

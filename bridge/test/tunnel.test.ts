import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkResponseFrame,
  encodeBodyData,
  encodeFrame,
  type Frame,
  FrameReader,
  ResponseFrame,
} from '../../lib/framing.js';
import { checkGitalyAuth } from '../../lib/gitaly-auth.js';
import { jwtKey, verifyWorkhorseJwt } from '../../lib/jwt.js';
import { type Harness, type RunningBridge, startHarness } from '../test-support/harness.js';
import { openTunnel, type Protocol } from '../test-support/tunnel-client.js';

const FLOOD_BYTES = 24 * 1024 * 1024;
let h: Harness;
let b: RunningBridge;
beforeAll(async () => {
  h = await startHarness();
  b = await h.startBridge({ responseKeepaliveMs: 150 });
  h.gitaly.setBehaviour('echo/cat.git', { argv: ['cat'] });
  h.gitaly.setBehaviour('echo/fail.git', {
    argv: ['sh', '-c', 'printf out; printf "fatal: simulated\\n" >&2; exit 3'],
  });
  h.gitaly.setBehaviour('echo/ok-stderr.git', {
    argv: ['sh', '-c', 'printf out; printf "progress\\n" >&2; exit 0'],
  });
  h.gitaly.setBehaviour('echo/slow.git', { argv: ['sh', '-c', 'sleep 0.5; printf done'] });
  h.gitaly.setBehaviour('echo/flood.git', { argv: ['head', '-c', String(FLOOD_BYTES), '/dev/zero'] });
});
afterAll(async () => {
  await h?.close();
});

function frames(body: Buffer): Frame[] {
  return new FrameReader(checkResponseFrame).push(body);
}

const FRAMED = { 'gitlab-cells-response-framing': 'v1' };
const BODY_FRAMED = { 'gitlab-shell-body-framing': 'v1' };

async function waitUntil(pred: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!pred()) {
    if (performance.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['h1', 'h2'] as const)('tunnel over %s', (protocol: Protocol) => {
  const open = async (path: string, headers: Record<string, string> = {}) =>
    openTunnel(protocol, b.url, path, { 'gitlab-shell-api-request': await h.token(), ...headers });

  it('is full duplex: each request chunk is answered before the next is sent', async () => {
    const t = await open('/echo/cat.git/ssh-upload-pack', { 'x-request-id': `pingpong-${protocol}` });
    expect(await t.status).toBe(200);
    expect((await t.headers)['x-request-id']).toBe(`pingpong-${protocol}`);
    let expected = '';
    for (let i = 0; i < 5; i++) {
      t.write(`ping ${i}\n`);
      expected += `ping ${i}\n`;
      await t.waitFor((buf) => buf.toString() === expected);
    }
    t.end();
    expect(await t.done).toBe(true);
    expect(t.received().toString()).toBe(expected);
    const line = b.logs.tunnels().find((l) => l.correlation_id === `pingpong-${protocol}`);
    expect(line).toMatchObject({
      route: 'ssh_upload_pack',
      project: 'echo/cat',
      gl_id: 'user-2',
      protocol,
      outcome: 'ok',
      bytes_in: expected.length,
      bytes_out: expected.length,
    });
    expect(typeof line?.duration_ms).toBe('number');
    expect(b.logs.text()).not.toContain(await h.token());
  });

  it('pre-authorizes with the client headers and the Workhorse identity, and calls Gitaly with auth and metadata', async () => {
    h.rails.setPolicy(`meta/${protocol}`, {
      kind: 'allow',
      gitConfigOptions: ['uploadpack.allowFilter=true'],
      callMetadata: {
        'gitaly-feature-foo': 'true',
        user_id: '2',
        username: 'alice',
        remote_ip: '1.2.3.4',
        retry_config: 'x',
      },
    });
    h.gitaly.setBehaviour(`meta/${protocol}.git`, { argv: ['cat'] });
    const t = await open(`/meta/${protocol}.git/ssh-upload-pack?x=1`, {
      'git-protocol': 'version=2',
      authorization: 'GL-Geo abc:def',
      'x-request-id': `meta-${protocol}`,
      'content-type': 'application/octet-stream',
    });
    expect(await t.status).toBe(200);
    t.end();
    await t.done;
    const pre = h.rails.preauths().find((r) => r.headers['x-request-id'] === `meta-${protocol}`);
    expect(pre).toBeDefined();
    expect(pre?.method).toBe('POST');
    expect(pre?.url).toBe(`/meta/${protocol}.git/ssh-upload-pack?x=1`);
    expect(pre?.body.length).toBe(0);
    expect(pre?.headers.authorization).toBe('GL-Geo abc:def');
    expect(pre?.headers['git-protocol']).toBe('version=2');
    expect(pre?.headers['content-type']).toBeUndefined();
    expect(pre?.headers['transfer-encoding']).toBeUndefined();
    expect(pre?.headers['gitlab-workhorse']).toMatch(/bridge/);
    const wh = await verifyWorkhorseJwt(
      jwtKey(h.workhorseSecret),
      pre?.headers['gitlab-workhorse-api-request'] as string,
    );
    expect(wh.ok).toBe(true);

    const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === `meta-${protocol}`);
    expect(call?.rpc).toBe('SSHUploadPack');
    expect(checkGitalyAuth(call?.metadata.authorization, h.gitalyToken)).toBe('ok');
    expect(call?.metadata['gitaly-feature-foo']).toBe('true');
    expect(call?.metadata.user_id).toBe('2');
    expect(call?.metadata.username).toBe('alice');
    expect(call?.metadata.remote_ip).toBe('1.2.3.4');
    expect(call?.metadata.retry_config).toBeUndefined();
    expect(call?.first.git_protocol).toBe('version=2');
    expect(call?.first.git_config_options).toEqual(['uploadpack.allowFilter=true']);
    expect(call?.first.repository?.relative_path).toBe(`meta/${protocol}.git`);
    expect(b.logs.text()).not.toContain(h.gitalyToken);
  });

  it('tunnels a Geo request that Rails accepts, with the gl_id Rails returns', async () => {
    h.gitaly.setBehaviour(`geo/${protocol}.git`, { argv: ['cat'] });
    const t = openTunnel(protocol, b.url, `/geo/${protocol}.git/ssh-upload-pack`, {
      authorization: 'GL-Geo node1:valid',
    });
    expect(await t.status).toBe(200);
    t.write('geo');
    await t.waitFor((buf) => buf.toString() === 'geo');
    t.end();
    expect(await t.done).toBe(true);
    const pre = h.rails.preauths().find((r) => r.url === `/geo/${protocol}.git/ssh-upload-pack`);
    expect(pre?.headers.authorization).toBe('GL-Geo node1:valid');
    const line = b.logs.tunnels().find((l) => l.project === `geo/${protocol}`);
    expect(line).toMatchObject({ gl_id: 'key-1', outcome: 'ok' });
  });

  it('answers 500 before the 200 when Rails names a Gitaly address that is not tcp://', async () => {
    h.rails.setPolicy(`unix/${protocol}`, { kind: 'allow', gitalyAddress: 'unix:/run/gitaly.sock' });
    const t = await open(`/unix/${protocol}.git/ssh-upload-pack`);
    expect(await t.status).toBe(500);
    expect(await t.done).toBe(true);
    expect(t.received().toString()).toBe('Internal Server Error\n');
    const line = b.logs.tunnels().find((l) => l.project === `unix/${protocol}`);
    expect(line).toMatchObject({ outcome: 'system', error_code: 'BRIDGE_GITALY_ADDRESS' });
    expect(String(line?.reason)).toMatch(/only tcp:\/\/host:port/);
  });

  it('reports an unreachable Gitaly in-band after the 200', async () => {
    h.rails.setPolicy(`down/${protocol}`, { kind: 'allow', gitalyAddress: 'tcp://127.0.0.1:1' });
    const compat = await open(`/down/${protocol}.git/ssh-upload-pack`);
    expect(await compat.status).toBe(200);
    expect(await compat.done).toBe(true);
    expect(compat.received().toString()).toBe('Internal Server Error\n');
    const framed = await open(`/down/${protocol}.git/ssh-upload-pack`, FRAMED);
    expect(await framed.done).toBe(true);
    const error = frames(framed.received()).find((f) => f.type === ResponseFrame.error);
    expect(JSON.parse(error?.payload.toString() ?? '{}')).toMatchObject({ code: 'GITALY_UNAVAILABLE' });
  });

  it('reports a token Gitaly refuses as a Gitaly error', async () => {
    h.rails.setPolicy(`badtoken/${protocol}`, { kind: 'allow', gitalyToken: 'wrong' });
    const t = await open(`/badtoken/${protocol}.git/ssh-upload-pack`, FRAMED);
    expect(await t.done).toBe(true);
    const error = frames(t.received()).find((f) => f.type === ResponseFrame.error);
    expect(JSON.parse(error?.payload.toString() ?? '{}')).toMatchObject({ code: 'GITALY_PERMISSION_DENIED' });
  });

  it('sends gl_id, gl_repository and gl_username on receive-pack', async () => {
    h.gitaly.setBehaviour(`rp/${protocol}.git`, { argv: ['cat'] });
    const t = await open(`/rp/${protocol}.git/ssh-receive-pack`);
    t.end('0000');
    expect(await t.done).toBe(true);
    const call = h.gitaly.calls.find((c) => c.first.repository?.relative_path === `rp/${protocol}.git`);
    expect(call?.rpc).toBe('SSHReceivePack');
    expect(call?.first).toMatchObject({ gl_id: 'user-2', gl_repository: 'project-1', gl_username: 'alice' });
  });

  it('compatible mode interleaves stderr and appends "Internal Server Error" when Gitaly fails', async () => {
    const t = await open('/echo/fail.git/ssh-upload-pack');
    expect(await t.status).toBe(200);
    expect(await t.done).toBe(true);
    // The request body was never ended: the exchange is closed after the response.
    await t.closed;
    const body = t.received().toString();
    expect(body).toContain('out');
    expect(body).toContain('fatal: simulated\n');
    expect(body.endsWith('Internal Server Error\n')).toBe(true);
  });

  it('framed mode carries stderr, the exit status and the error separately', async () => {
    const t = await open('/echo/fail.git/ssh-upload-pack', FRAMED);
    expect((await t.headers)['gitlab-cells-response-framing']).toBe('v1');
    expect(await t.done).toBe(true);
    const fs = frames(t.received());
    const text = (type: number) =>
      Buffer.concat(fs.filter((f) => f.type === type).map((f) => f.payload)).toString();
    expect(text(ResponseFrame.stdout)).toBe('out');
    expect(text(ResponseFrame.stderr)).toBe('fatal: simulated\n');
    const error = fs.find((f) => f.type === ResponseFrame.error);
    expect(JSON.parse(error?.payload.toString() ?? '{}')).toMatchObject({ code: 'GITALY_INTERNAL' });
    const last = fs.at(-1);
    expect(last?.type).toBe(ResponseFrame.exitStatus);
    expect(last?.payload.readInt32BE(0)).toBe(3);
  });

  it('framed mode ends a successful call with exit status 0', async () => {
    const t = await open('/echo/ok-stderr.git/ssh-upload-pack', FRAMED);
    expect(await t.done).toBe(true);
    const fs = frames(t.received());
    expect(fs.map((f) => f.type)).toEqual(
      expect.arrayContaining([ResponseFrame.stdout, ResponseFrame.stderr, ResponseFrame.exitStatus]),
    );
    expect(fs.some((f) => f.type === ResponseFrame.error)).toBe(false);
    expect(fs.at(-1)?.payload.readInt32BE(0)).toBe(0);
  });

  it('framed mode sends keepalives while the response is idle', async () => {
    const t = await open('/echo/slow.git/ssh-upload-pack', FRAMED);
    t.end();
    expect(await t.done).toBe(true);
    const types = frames(t.received()).map((f) => f.type);
    expect(types.filter((x) => x === ResponseFrame.keepalive).length).toBeGreaterThanOrEqual(2);
    expect(types.slice(-2)).toEqual([ResponseFrame.stdout, ResponseFrame.exitStatus]);
  });

  it('unwraps body framing v1 and drops keepalive frames', async () => {
    const t = await open('/echo/cat.git/ssh-upload-pack', BODY_FRAMED);
    t.write(Buffer.concat([...encodeBodyData(Buffer.from('hello ')), encodeFrame(0x02)]));
    await t.waitFor((buf) => buf.toString() === 'hello ');
    const big = Buffer.alloc(200_000, 'a');
    t.write(Buffer.concat(encodeBodyData(big)));
    t.end(Buffer.concat(encodeBodyData(Buffer.from('world'))));
    expect(await t.done).toBe(true);
    expect(t.received().toString()).toBe(`hello ${big.toString()}world`);
  });

  for (const framed of [false, true]) {
    it(`aborts on a malformed body frame (${framed ? 'framed' : 'compatible'} response) and stops git`, async () => {
      const id = `badframe-${protocol}-${framed}`;
      const t = await open('/echo/cat.git/ssh-upload-pack', {
        ...BODY_FRAMED,
        ...(framed ? FRAMED : {}),
        'x-request-id': id,
      });
      t.write(Buffer.concat(encodeBodyData(Buffer.from('ok'))));
      await t.waitFor((buf) => buf.includes('ok'));
      t.write(Buffer.from([0x07, 0, 0, 0, 1, 0x41]));
      expect(await t.done).toBe(true);
      if (framed) {
        const error = frames(t.received()).find((f) => f.type === ResponseFrame.error);
        expect(JSON.parse(error?.payload.toString() ?? '{}')).toMatchObject({ code: 'BRIDGE_BAD_FRAME' });
      } else {
        expect(t.received().toString()).toBe('okInternal Server Error\n');
      }
      const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === id);
      await call?.exited;
      expect(call?.cancelled).toBe(true);
      t.close();
      expect(b.logs.tunnels().find((l) => l.correlation_id === id)).toMatchObject({
        error_code: 'BRIDGE_BAD_FRAME',
      });
    });
  }

  it('cancels the Gitaly call when the client goes away mid-stream (git child gone within 2 s)', async () => {
    const id = `gone-${protocol}`;
    const t = await open('/echo/cat.git/ssh-upload-pack', { 'x-request-id': id });
    t.write('x');
    await t.waitFor((buf) => buf.toString() === 'x');
    const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === id);
    expect(call?.child?.exitCode).toBeNull();
    const started = performance.now();
    t.abort();
    await call?.exited;
    expect(performance.now() - started).toBeLessThan(2000);
    expect(call?.cancelled).toBe(true);
    await waitUntil(() => b.logs.tunnels().some((l) => l.correlation_id === id), 2000);
    expect(b.logs.tunnels().find((l) => l.correlation_id === id)).toMatchObject({ outcome: 'client-gone' });
  });

  it('cancels the pre-authorization when the client goes away during it', async () => {
    const id = `gone-preauth-${protocol}`;
    h.rails.setPolicy(`hang/${protocol}`, { kind: 'hang' });
    const t = await open(`/hang/${protocol}.git/ssh-upload-pack`, { 'x-request-id': id });
    await waitUntil(() => h.rails.preauths().some((r) => r.headers['x-request-id'] === id), 2000);
    t.abort();
    await waitUntil(() => b.logs.tunnels().some((l) => l.correlation_id === id), 2000);
    expect(b.logs.tunnels().find((l) => l.correlation_id === id)).toMatchObject({ outcome: 'client-gone' });
  });

  it('applies backpressure to the request body: a git that does not read stdin stops the client', async () => {
    const id = `stuck-${protocol}`;
    h.gitaly.setBehaviour(`stuck/${protocol}.git`, { argv: ['sleep', '30'] });
    const t = await open(`/stuck/${protocol}.git/ssh-receive-pack`, { 'x-request-id': id });
    expect(await t.status).toBe(200);
    const chunk = Buffer.alloc(1024 * 1024, 'p');
    for (let i = 0; i < 48; i++) t.write(chunk);
    await new Promise((r) => setTimeout(r, 1500));
    const accepted = async () =>
      (await b.bridge.metrics.bytes.get()).values.find(
        (v) => v.labels.route === 'ssh_receive_pack' && v.labels.direction === 'in',
      )?.value ?? 0;
    const first = await accepted();
    await new Promise((r) => setTimeout(r, 300));
    expect(await accepted()).toBe(first);
    expect(first).toBeLessThan(24 * 1024 * 1024);
    const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === id);
    call?.child?.kill('SIGKILL');
    t.close();
    await call?.exited;
  });

  it('applies backpressure: a client that stops reading stops Gitaly', async () => {
    const id = `flood-${protocol}`;
    const t = await open('/echo/flood.git/ssh-upload-pack', { 'x-request-id': id });
    await t.waitFor((buf) => buf.length > 1024 * 1024, 10_000);
    const call = h.gitaly.calls.find((c) => c.metadata['x-gitlab-correlation-id'] === id);
    expect(call).toBeDefined();
    // Stop reading: the client's buffers fill, then the bridge's, then Gitaly's writes block.
    t.pause();
    await new Promise((r) => setTimeout(r, 800));
    const sent1 = call?.bytesSent ?? 0;
    await new Promise((r) => setTimeout(r, 400));
    const sent2 = call?.bytesSent ?? 0;
    expect(sent2).toBe(sent1);
    // What sits in buffers between Gitaly and the paused client is bounded (windows, socket buffers).
    expect(sent1 - t.received().length).toBeLessThan(12 * 1024 * 1024);
    t.resume();
    expect(await t.done).toBe(true);
    expect(t.received().length).toBe(FLOOD_BYTES);
  });
});

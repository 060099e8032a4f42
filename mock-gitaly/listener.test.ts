import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../lib/logger.js';
import { encodePkt, FLUSH_PKT } from '../lib/pktline.js';
import { loadSshService } from '../lib/proto.js';
import { peekMagic } from './listener.js';
import { connectBackchannel, SidechannelCall } from './test-support/backchannel-client.js';
import {
  authMetadata,
  cleanup,
  createRepo,
  onCleanup,
  RawCall,
  type StartedGitaly,
  startGitaly,
  stubHookProgram,
  tempDir,
} from './test-support/harness.js';

/** TLS and unix listeners (the bridge dials `tls://` and `unix:`), and the 11-byte peek itself. */

const REPO = 'group/project.git';
const repository = { storage_name: 'default', relative_path: REPO };

afterEach(cleanup);

function selfSigned(): { cert: string; key: string } {
  const dir = tempDir();
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1'].concat([
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  return { cert, key };
}

async function cloneThrough(g: StartedGitaly, address: string, commit: string, ca?: Buffer) {
  const bc = connectBackchannel(address, ca ? { ca } : {});
  onCleanup(() => bc.close());
  const call = new SidechannelCall(bc, { repository }, authMetadata(g.token));
  await call.write(Buffer.concat([encodePkt(`want ${commit}\n`), FLUSH_PKT, encodePkt('done\n')]));
  await call.closeWrite();
  const outcome = await call.done;
  expect(outcome.error).toBeNull();
  expect(outcome.stdout.toString('latin1')).toContain('PACK');
}

async function archiveThrough(g: StartedGitaly, client: grpc.Client) {
  onCleanup(() => client.close());
  const call = new RawCall(client, 'SSHUploadArchive', authMetadata(g.token));
  call.send({ repository });
  call.send({ stdin: Buffer.concat([encodePkt('argument HEAD\n'), FLUSH_PKT]) });
  call.call.end();
  const done = await call.done;
  expect(done.status.code).toBe(grpc.status.OK);
  expect(done.stdout.toString('latin1')).toContain('README.md');
}

describe('listeners', () => {
  it('TLS: the backchannel magic inside TLS, and plain gRPC over TLS on the same port', async () => {
    const { cert, key } = selfSigned();
    const g = await startGitaly(
      { listenTls: '127.0.0.1:0', tlsCertFile: cert, tlsKeyFile: key },
      { hookProgram: stubHookProgram() },
    );
    const commit = await createRepo(g.storage, REPO);
    const ca = readFileSync(cert);
    const port = g.bound.tlsPort as number;
    expect(port).toBeGreaterThan(0);
    await cloneThrough(g, `tls://127.0.0.1:${port}`, commit, ca);
    const Client = loadSshService();
    await archiveThrough(g, new Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(ca)));
  });

  it('unix: backchannel and plain gRPC on the socket; the socket file goes at stop', async () => {
    const path = join(tempDir(), 'gitaly.sock');
    const g = await startGitaly({ listenUnix: path }, { hookProgram: stubHookProgram() });
    const commit = await createRepo(g.storage, REPO);
    expect(g.bound.unixPath).toBe(path);
    await cloneThrough(g, `unix:${path}`, commit);
    const Client = loadSshService();
    await archiveThrough(g, new Client(`unix:${path}`, grpc.credentials.createInsecure()));
    await g.gitaly.stop(100);
    expect(existsSync(path)).toBe(false);
  });
});

describe('peekMagic', () => {
  const logger = createLogger('peek-test', 'silent');

  function peek(...chunks: string[]) {
    const socket = new PassThrough();
    const seen: Array<{ kind: string; rest: string }> = [];
    const take = (kind: string) => (s: NodeJS.ReadWriteStream) => {
      const rest: Buffer[] = [];
      s.on('data', (c: Buffer) => rest.push(c));
      s.resume();
      setImmediate(() => seen.push({ kind, rest: Buffer.concat(rest).toString() }));
    };
    peekMagic(socket, { backchannel: take('backchannel'), plain: take('plain') }, logger);
    for (const c of chunks) socket.write(c);
    return new Promise<typeof seen>((resolve) => setTimeout(() => resolve(seen), 50));
  }

  it('waits for all 11 bytes of the magic, even split, and keeps what follows it', async () => {
    expect(await peek('back', 'chan', 'nel', '\u0000\u0001')).toEqual([
      { kind: 'backchannel', rest: '\u0000\u0001' },
    ]);
  });

  it('decides on the first differing byte and puts every byte back', async () => {
    expect(await peek('PRI * HTTP/2.0')).toEqual([{ kind: 'plain', rest: 'PRI * HTTP/2.0' }]);
    expect(await peek('backc', 'x')).toEqual([{ kind: 'plain', rest: 'backcx' }]);
  });

  it('a real socket that sends a plain preface is served as plain gRPC', async () => {
    const g = await startGitaly({}, { hookProgram: stubHookProgram() });
    const socket = net.connect(Number(g.address.split(':')[1]), '127.0.0.1');
    onCleanup(() => {
      socket.destroy();
    });
    socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    const reply = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    // An HTTP/2 server answers the preface with a SETTINGS frame (type 4).
    expect(reply[3]).toBe(4);
    expect(g.gitaly.backchannelSessions).toBe(0);
  });
});

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesceWrites, SSH_ALGORITHMS, tuneSsh2PacketPath } from './algorithms.js';

interface Ssh2Crypto {
  CIPHER_INFO: Record<string, unknown>;
  createCipher(config: unknown): { allocPacket(n: number): Buffer; free(): void };
}
const crypto = createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as Ssh2Crypto;

function cipher(name: string, keyLen: number, ivLen: number) {
  return crypto.createCipher({
    outbound: {
      onWrite: () => undefined,
      cipherInfo: crypto.CIPHER_INFO[name],
      cipherKey: Buffer.alloc(keyLen),
      cipherIV: Buffer.alloc(ivLen),
      seqno: 0,
    },
  });
}

/** Length and the five header bytes (packet length, padding length) of each payload size. */
function layouts(name: string, keyLen: number, ivLen: number): string[] {
  const c = cipher(name, keyLen, ivLen);
  const out = Array.from({ length: 80 }, (_, n) => {
    const p = c.allocPacket(n * 7);
    return `${p.length}:${p.subarray(0, 5).toString('hex')}`;
  });
  c.free();
  return out;
}

const CIPHERS: Array<[string, number, number]> = [
  ['chacha20-poly1305@openssh.com', 64, 0],
  ['aes128-gcm@openssh.com', 16, 12],
  ['aes256-gcm@openssh.com', 32, 12],
];

describe('ssh2 packet path', () => {
  it('allocates the same packet layout as ssh2 did, with fresh random padding', () => {
    const before = CIPHERS.map((c) => layouts(...c));
    tuneSsh2PacketPath();
    expect(CIPHERS.map((c) => layouts(...c))).toEqual(before);
    const c = cipher('aes128-gcm@openssh.com', 16, 12);
    const paddings = new Set(
      Array.from({ length: 50 }, () => {
        const p = c.allocPacket(11); // 5 + 11 → 16 bytes of padding
        return p.subarray(16, 32).toString('hex');
      }),
    );
    c.free();
    expect(paddings.size).toBe(50);
  });
});

describe('packet slabs', () => {
  it('are per cipher instance (connection and direction), never shared between two', () => {
    tuneSsh2PacketPath();
    const a = cipher('aes128-gcm@openssh.com', 16, 12);
    const b = cipher('aes128-gcm@openssh.com', 16, 12);
    const [a1, a2, b1] = [a.allocPacket(8000), a.allocPacket(8000), b.allocPacket(8000)];
    expect(a2.buffer).toBe(a1.buffer);
    expect(a2.buffer.byteLength).toBe(128 * 1024);
    expect(b1.buffer).not.toBe(a1.buffer);
    // small packets (handshake, window adjusts) never make a connection take a slab
    expect(b.allocPacket(100).buffer.byteLength).toBeLessThan(128 * 1024);
    // a full-size packet never overlaps the one before it
    const big = a.allocPacket(32_768);
    expect(big.byteOffset >= a2.byteOffset + a2.length || big.buffer !== a2.buffer).toBe(true);
    a.free();
    b.free();
  });
});

describe('coalesceWrites', () => {
  it('corks the socket while one read is handled and uncorks it in the same tick', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [accepted] = (await Promise.all([
      new Promise((r) => server.once('connection', r)),
      new Promise((r) => client.once('connect', r)),
    ])) as [net.Socket, unknown];
    coalesceWrites(accepted);
    const seen = await new Promise<number[]>((resolve) => {
      accepted.once('data', () => {
        const during = accepted.writableCorked;
        process.nextTick(() => setImmediate(() => resolve([during, accepted.writableCorked])));
      });
      client.write('x');
    });
    expect(seen).toEqual([1, 0]);
    client.destroy();
    accepted.destroy();
    server.close();
  });
});

/** An ssh2 server with the front's packet path whose exec requests answer PAYLOAD bytes. */
async function startServer(dir: string, algorithms: typeof SSH_ALGORITHMS): Promise<net.Server> {
  const server = new ssh2.Server({ hostKeys: [readFileSync(join(dir, 'host'))], algorithms }, (conn) => {
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => (ctx.method === 'publickey' ? ctx.accept() : ctx.reject()));
    conn.on('session', (accept) =>
      accept().on('exec', (acceptExec) => {
        const channel = acceptExec();
        channel.write(Buffer.alloc(PAYLOAD, 0x61), () => {
          channel.exit(0);
          channel.end();
        });
      }),
    );
  });
  const listener = net.createServer((socket) => {
    coalesceWrites(socket);
    server.injectSocket(socket);
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  return listener;
}

const PAYLOAD = 3 * 1024 * 1024 + 17;

/** Real OpenSSH `ssh` against ssh2 servers with the front's algorithms and packet path. */
describe('ciphers with OpenSSH', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ssh-algos-'));
  const listeners: net.Server[] = [];
  let port = 0;

  beforeAll(async () => {
    tuneSsh2PacketPath();
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host')]);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'user')]);
    const listener = await startServer(dir, SSH_ALGORITHMS);
    listeners.push(listener);
    port = (listener.address() as AddressInfo).port;
  });
  afterAll(() => {
    for (const l of listeners) l.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ssh = (cipherArgs: string[]) =>
    new Promise<{ bytes: number; code: number | null; log: string }>((resolve) => {
      const child = spawn(
        'ssh',
        [
          ...cipherArgs,
          '-v',
          '-i',
          join(dir, 'user'),
          '-o',
          'StrictHostKeyChecking=no',
          '-o',
          `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
          '-o',
          'BatchMode=yes',
          '-p',
          String(port),
          'git@127.0.0.1',
          'x',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let bytes = 0;
      let log = '';
      child.stdout.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      child.stderr.on('data', (c: Buffer) => {
        log += c.toString();
      });
      child.on('close', (code) => resolve({ bytes, code, log }));
    });

  it('OpenSSH’s default list settles on ChaCha20-Poly1305 (its first choice, still offered)', async () => {
    const r = await ssh([]);
    expect(r.code).toBe(0);
    expect(r.bytes).toBe(PAYLOAD);
    expect(r.log.match(/server->client cipher: \S+/)?.[0]).toBe(
      'server->client cipher: chacha20-poly1305@openssh.com',
    );
  }, 30_000);

  it.each(['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'aes128-ctr'])(
    '%s carries 3 MiB intact through the pooled packet path',
    async (name) => {
      const r = await ssh(['-c', name]);
      expect(r.code).toBe(0);
      expect(r.bytes).toBe(PAYLOAD);
      expect(r.log).toContain(`server->client cipher: ${name}`);
    },
    30_000,
  );
});

describe('without ssh2’s native binding', () => {
  it('the tuned packet path keeps the layout of ssh2’s node:crypto ciphers (no room for a tag)', () => {
    const root = join(import.meta.dirname, '..', '..');
    const dir = mkdtempSync(join(tmpdir(), 'ssh-nobinding-'));
    try {
      // Loads ssh2 as a machine without the compiled binding does (its `require` of it fails).
      const hide = join(dir, 'hide-binding.cjs');
      writeFileSync(
        hide,
        `const M = require('node:module'); const load = M._load;
M._load = function (request, ...rest) {
  if (String(request).includes('sshcrypto.node')) throw new Error('binding hidden');
  return load.call(this, request, ...rest);
};`,
      );
      const script = `
const { createRequire } = await import('node:module');
const crypto = createRequire(${JSON.stringify(join(root, 'package.json'))})('ssh2/lib/protocol/crypto.js');
const { tuneSsh2PacketPath } = await import(${JSON.stringify(join(root, 'dist', 'router', 'ssh', 'algorithms.js'))});
const ciphers = ${JSON.stringify(CIPHERS)};
const lengths = () => ciphers.map(([name, keyLen, ivLen]) => {
  const c = crypto.createCipher({ outbound: { onWrite: () => {}, cipherInfo: crypto.CIPHER_INFO[name],
    cipherKey: Buffer.alloc(keyLen), cipherIV: Buffer.alloc(ivLen), seqno: 0 } });
  const out = [0, 1, 7, 100, 4096, 5000, 32768].map((n) => c.allocPacket(n).length);
  c.free();
  return out;
});
const before = lengths();
tuneSsh2PacketPath();
console.log(JSON.stringify({ binding: crypto.bindingAvailable, before, after: lengths() }));`;
      const out = execFileSync(process.execPath, ['--require', hide, '--input-type=module', '-e', script], {
        cwd: root,
        encoding: 'utf8',
      });
      const r = JSON.parse(out) as { binding: boolean; before: number[][]; after: number[][] };
      expect(r.binding).toBe(false);
      expect(r.after).toEqual(r.before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

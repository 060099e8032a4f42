import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { Algorithms } from 'ssh2';

/**
 * @file The SSH front's algorithms and its packet path (README "Performance"). An SSH client
 * takes the first cipher of *its own* list that the server offers, so our order decides nothing
 * for OpenSSH clients, whose list starts with chacha20-poly1305, then AES-CTR, then AES-GCM: only
 * what we offer decides. Measured here (ssh2 with its native binding, x86 with AES-NI, CPU per GiB
 * sent): AES-GCM 0.78× ChaCha20-Poly1305, AES-CTR + HMAC 1.1×. Steering OpenSSH to AES-GCM would
 * mean offering neither ChaCha20 nor CTR, which locks out clients without GCM (libssh2 before
 * 1.11, as in libgit2-based tools; PuTTY before 0.76), so the front offers all three, fastest
 * first for clients that do follow the server, and makes each packet cheaper instead.
 */

/** Key exchange: curve25519 first, then the NIST curves; no finite-field DH. */
const KEX: Algorithms['kex'] = [
  'curve25519-sha256',
  'curve25519-sha256@libssh.org',
  'ecdh-sha2-nistp256',
  'ecdh-sha2-nistp384',
  'ecdh-sha2-nistp521',
];

export const SSH_ALGORITHMS: Algorithms = {
  kex: KEX,
  cipher: [
    'aes128-gcm@openssh.com',
    'aes256-gcm@openssh.com',
    'chacha20-poly1305@openssh.com',
    'aes128-ctr',
    'aes192-ctr',
    'aes256-ctr',
  ],
  // Only the CTR ciphers use a MAC (GCM authenticates itself): ssh2's default set, with SHA-2 and
  // encrypt-then-MAC first and SHA-1 last (kept for old clients).
  hmac: [
    'hmac-sha2-256-etm@openssh.com',
    'hmac-sha2-512-etm@openssh.com',
    'hmac-sha2-256',
    'hmac-sha2-512',
    'hmac-sha1-etm@openssh.com',
    'hmac-sha1',
  ],
};

/**
 * Writes made while ssh2 handles one read of the socket leave in one `writev`: on a window
 * adjust from the client, ssh2 sends the channel's waiting data packet by packet, one write
 * system call each. The cork lasts until the end of the current tick, so nothing waits longer.
 */
export function coalesceWrites(socket: Socket): void {
  socket.prependListener('data', () => {
    socket.cork();
    process.nextTick(() => socket.uncork());
  });
}

interface Ssh2Cipher {
  allocPacket(payloadLen: number): Buffer;
  free(): void;
}
interface Ssh2Crypto {
  CIPHER_INFO: Record<string, unknown>;
  createCipher(config: unknown): Ssh2Cipher;
}

const RANDOM_POOL_BYTES = 64 * 1024;
/**
 * Per connection and direction: four full-size packets. A slab is freed once all its packets are
 * written, so a client that stops reading pins its own packets and at most one slab's rest, never
 * other connections' memory.
 */
const SLAB_BYTES = 128 * 1024;
/** Larger packets get a buffer of their own (ssh2's packets are at most ~35 000 bytes). */
const SLAB_MAX_PACKET = 40 * 1024;
/**
 * Smaller ones (handshake, window adjusts, keepalives) come from Node's shared buffer pool, so a
 * connection that never carries bulk data never gets a slab (idle tunnels stay small).
 */
const SLAB_MIN_PACKET = 4 * 1024;

/** CSPRNG bytes fetched 64 KiB at a time, each handed out once (packet padding). */
class RandomPool {
  private pool: Buffer = Buffer.alloc(0);
  private at = 0;

  fill(target: Buffer, offset: number, length: number): void {
    if (this.at + length > this.pool.length) {
      this.pool = randomFillSync(Buffer.allocUnsafe(RANDOM_POOL_BYTES));
      this.at = 0;
    }
    this.pool.copy(target, offset, this.at, this.at + length);
    this.at += length;
  }
}

/** Packet buffers cut from slabs, in order (never reused: a slab is freed once all its packets are). */
class PacketSlab {
  private slab: Buffer = Buffer.alloc(0);
  private at = 0;

  take(bytes: number): Buffer {
    if (bytes < SLAB_MIN_PACKET || bytes > SLAB_MAX_PACKET) return Buffer.allocUnsafe(bytes);
    if (this.at + bytes > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.at = 0;
    }
    const packet = this.slab.subarray(this.at, this.at + bytes);
    this.at += (bytes + 7) & ~7;
    return packet;
  }
}

/** One pool of padding bytes for the process (bytes are copied out, nothing stays referenced). */
const random = new RandomPool();

/**
 * ssh2's `allocPacket` of the AEAD ciphers, same layout (RFC 4253 §6: length, padding length,
 * payload, ≥ 4 bytes of random padding to a multiple of `block`, then `tagRoom` bytes: room for the
 * tag in the native binding's classes, none in the node:crypto ones, which write the tag apart) without
 * its per-packet `randomFillSync` call and per-packet buffer allocation; `slab` is the cipher's own.
 */
function pooledAllocPacket(block: number, tagRoom: number, slab: PacketSlab): (payloadLen: number) => Buffer {
  return (payloadLen) => {
    const pktLen = unpaddedLength(block, payloadLen);
    const padLen = pktLen - 5 - payloadLen;
    const packet = slab.take(pktLen + tagRoom);
    packet.writeUInt32BE(pktLen - 4, 0);
    packet[4] = padLen;
    random.fill(packet, 5 + payloadLen, padLen);
    return packet;
  };
}

/** The length of a packet of `payloadLen` bytes with its padding, without anything after it. */
function unpaddedLength(block: number, payloadLen: number): number {
  let padLen = block - ((1 + payloadLen) & (block - 1));
  if (padLen < 4) padLen += block;
  return 5 + payloadLen + padLen;
}

/** Cipher name → [padding block, key length, IV length] of the AEAD ciphers whose packet path is replaced. */
const AEAD: Record<string, [number, number, number]> = {
  'chacha20-poly1305@openssh.com': [8, 64, 0],
  'aes128-gcm@openssh.com': [16, 16, 12],
  'aes256-gcm@openssh.com': [16, 32, 12],
};

let tuned = false;

/**
 * Replaces `allocPacket` on ssh2's AEAD cipher classes (native binding or not) with the pooled
 * one. Done once per process; the classes are reached through `createCipher`, ssh2's only door.
 */
export function tuneSsh2PacketPath(): void {
  if (tuned) return;
  tuned = true;
  const crypto = createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as Ssh2Crypto;
  for (const [name, [block, keyLen, ivLen]] of Object.entries(AEAD)) {
    const cipherInfo = crypto.CIPHER_INFO[name];
    if (!cipherInfo) continue;
    const cipher = crypto.createCipher({
      outbound: {
        onWrite: () => undefined,
        cipherInfo,
        cipherKey: Buffer.alloc(keyLen),
        cipherIV: Buffer.alloc(ivLen),
        seqno: 0,
      },
    });
    const proto = Object.getPrototypeOf(cipher) as Ssh2Cipher;
    // The class in use (binding or node:crypto) decides whether its packets carry room for the tag:
    // measured on ssh2's own allocator, so the pooled one allocates exactly what `encrypt` expects.
    const tagRoom = cipher.allocPacket(0).length - unpaddedLength(block, 0);
    cipher.free();
    if (tagRoom < 0) continue;
    // one cipher instance per connection and direction: each gets its own slab
    const allocators = new WeakMap<object, (payloadLen: number) => Buffer>();
    proto.allocPacket = function allocPacket(this: object, payloadLen: number): Buffer {
      let alloc = allocators.get(this);
      if (!alloc) {
        alloc = pooledAllocPacket(block, tagRoom, new PacketSlab());
        allocators.set(this, alloc);
      }
      return alloc(payloadLen);
    };
  }
}

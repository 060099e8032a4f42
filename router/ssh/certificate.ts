/**
 * @file OpenSSH user certificates (PROTOCOL.certkeys), which ssh2 1.17 hands over undecoded: the
 * `*-cert-v01@openssh.com` blob is parsed here, its CA signature and the client's session signature
 * verified with the keys inside it, and checked as gitlab-sshd (`ssh.CertChecker`) does: a user
 * certificate, now within `[valid after, valid before)`, the SSH login among the principals (when
 * any are listed), only the `source-address` critical option (which must admit the client).
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import ssh2 from 'ssh2';

const { utils } = ssh2;

export const CERT_SUFFIX = '-cert-v01@openssh.com';
const USER_CERT = 1;

export interface Certificate {
  /** The plain public key type (`ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`, …). */
  keyType: string;
  /** The certified public key as a plain SSH blob. */
  publicKey: Buffer;
  serial: bigint;
  certType: number;
  keyId: string;
  principals: string[];
  validAfter: bigint;
  validBefore: bigint;
  criticalOptions: Map<string, string>;
  /** The CA's public key blob. */
  signatureKey: Buffer;
  signature: Buffer;
  /** Everything the CA signed (the blob up to the signature). */
  signed: Buffer;
}

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  get offset(): number {
    return this.pos;
  }
  bytes(): Buffer {
    const n = this.uint32();
    if (this.pos + n > this.buf.length) throw new Error('certificate truncated');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  string(): string {
    return this.bytes().toString('utf8');
  }
  uint32(): number {
    if (this.pos + 4 > this.buf.length) throw new Error('certificate truncated');
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  uint64(): bigint {
    if (this.pos + 8 > this.buf.length) throw new Error('certificate truncated');
    const v = this.buf.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }
  done(): boolean {
    return this.pos === this.buf.length;
  }
}

function sshString(b: Buffer | string): Buffer {
  const data = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, data]);
}

/** How many `string` fields the public key of each certificate type has (after the nonce). */
const KEY_FIELDS: Record<string, number> = {
  'ssh-ed25519': 1,
  'ssh-rsa': 2,
  'ecdsa-sha2-nistp256': 2,
  'ecdsa-sha2-nistp384': 2,
  'ecdsa-sha2-nistp521': 2,
};

function packed(blob: Buffer): string[] {
  const r = new Reader(blob);
  const out: string[] = [];
  while (!r.done()) out.push(r.string());
  return out;
}

function options(blob: Buffer): Map<string, string> {
  const r = new Reader(blob);
  const out = new Map<string, string>();
  while (!r.done()) {
    const name = r.string();
    const data = r.bytes();
    out.set(name, data.length === 0 ? '' : new Reader(data).string());
  }
  return out;
}

export function parseCertificate(blob: Buffer): Certificate {
  const r = new Reader(blob);
  const type = r.string();
  if (!type.endsWith(CERT_SUFFIX)) throw new Error(`not a certificate: ${type}`);
  const keyType = type.slice(0, -CERT_SUFFIX.length);
  const fields = KEY_FIELDS[keyType];
  if (fields === undefined) throw new Error(`unsupported certificate key type ${keyType}`);
  r.bytes(); // nonce
  const keyParts = Array.from({ length: fields }, () => r.bytes());
  // RSA certificates carry e then n, as the plain key; the others their plain fields in order.
  const publicKey = Buffer.concat([sshString(keyType), ...keyParts.map(sshString)]);
  const serial = r.uint64();
  const certType = r.uint32();
  const keyId = r.string();
  const principals = packed(r.bytes());
  const validAfter = r.uint64();
  const validBefore = r.uint64();
  const criticalOptions = options(r.bytes());
  r.bytes(); // extensions
  r.bytes(); // reserved
  const signatureKey = r.bytes();
  const signedEnd = r.offset;
  const signature = r.bytes();
  if (!r.done()) throw new Error('trailing bytes after the certificate signature');
  return {
    keyType,
    publicKey,
    serial,
    certType,
    keyId,
    principals,
    validAfter,
    validBefore,
    criticalOptions,
    signatureKey,
    signature,
    signed: blob.subarray(0, signedEnd),
  };
}

function derLength(n: number): Buffer {
  return n < 0x80 ? Buffer.from([n]) : Buffer.from([0x81, n]);
}

/** An SSH `r, s` ECDSA signature as the DER OpenSSL verifies. */
function ecdsaDer(sig: Buffer): Buffer {
  const r = new Reader(sig);
  const int = (v: Buffer) => {
    let x = v;
    while (x.length > 1 && x[0] === 0 && ((x[1] as number) & 0x80) === 0) x = x.subarray(1);
    if (((x[0] as number) & 0x80) !== 0) x = Buffer.concat([Buffer.from([0]), x]);
    return Buffer.concat([Buffer.from([0x02]), derLength(x.length), x]);
  };
  const body = Buffer.concat([int(r.bytes()), int(r.bytes())]);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}

const RSA_HASH: Record<string, string> = { 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' };

/**
 * Verifies an SSH signature blob (`string format, string bytes`) by `keyBlob` over `data`. RSA
 * needs SHA-2 (`ssh-rsa` SHA-1 signatures are refused, as OpenSSH 8.2+ does for certificates).
 */
export function verifySshSignature(keyBlob: Buffer, data: Buffer, signatureBlob: Buffer): boolean {
  try {
    const parsed = utils.parseKey(keyBlob);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key || key instanceof Error) return false;
    const r = new Reader(signatureBlob);
    const format = r.string();
    const bytes = r.bytes();
    if (key.type === 'ssh-rsa') {
      const hash = RSA_HASH[format];
      return hash !== undefined && key.verify(data, bytes, hash) === true;
    }
    if (format !== key.type) return false;
    return key.verify(data, key.type.startsWith('ecdsa-') ? ecdsaDer(bytes) : bytes) === true;
  } catch {
    return false;
  }
}

/** `SHA256:` fingerprint of a key blob, unpadded base64 (OpenSSH's form). */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Why a certificate may not log in as `login` from `clientIp` now; undefined when it may. */
export function certificateProblem(
  cert: Certificate,
  login: string,
  clientIp: string,
  now = new Date(),
): string | undefined {
  if (cert.certType !== USER_CERT) return `not a user certificate (type ${cert.certType})`;
  const seconds = BigInt(Math.floor(now.getTime() / 1000));
  if (seconds < cert.validAfter) return 'certificate is not yet valid';
  if (seconds >= cert.validBefore) return 'certificate has expired';
  if (cert.principals.length > 0 && !cert.principals.includes(login))
    return `certificate is not valid for principal ${JSON.stringify(login)}`;
  for (const [name, value] of cert.criticalOptions) {
    if (name !== 'source-address') return `unsupported critical option ${JSON.stringify(name)}`;
    if (!sourceAllowed(value, clientIp)) return `source address ${clientIp} not allowed by the certificate`;
  }
  if (!verifySshSignature(cert.signatureKey, cert.signed, cert.signature))
    return 'certificate signature does not verify';
  return undefined;
}

function sourceAllowed(list: string, ip: string): boolean {
  const block = new net.BlockList();
  for (const entry of list.split(',')) {
    const [address = '', prefix] = entry.trim().split('/');
    const type = net.isIPv6(address) ? 'ipv6' : 'ipv4';
    if (net.isIP(address) === 0) return false;
    if (prefix === undefined) block.addAddress(address, type);
    else block.addSubnet(address, Number(prefix), type);
  }
  return block.check(ip, net.isIPv6(ip) ? 'ipv6' : 'ipv4');
}

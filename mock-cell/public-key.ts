/** Decodes the base64 blob of an OpenSSH public key line; undefined when the line is malformed. */
export function publicKeyBlob(line: string): string | undefined {
  const parts = line.trim().split(/\s+/);
  const [type, blob] = parts;
  if (!type || !blob || !/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return undefined;
  const raw = Buffer.from(blob, 'base64');
  if (raw.length < 4) return undefined;
  const typeLen = raw.readUInt32BE(0);
  if (raw.subarray(4, 4 + typeLen).toString('latin1') !== type) return undefined;
  return blob;
}

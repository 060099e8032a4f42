import { createHmac } from 'node:crypto';
import http2 from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JwtKey } from '../../lib/jwt.js';
import { type GeoNodeKey, signGeoToken } from '../../mock-cell/geo/token.js';
import { rawConnect } from './wire.js';

/** Bad tokens of every kind, and clients that time the refusal of a request whose body never ends. */
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A compact JWS signed HS256 with `key` (or unsigned, for `alg: none`). */
export function jws(header: unknown, claims: unknown, key: Uint8Array | undefined): string {
  const input = `${b64url(header)}.${b64url(claims)}`;
  return `${input}.${key ? createHmac('sha256', key).update(input).digest('base64url') : ''}`;
}

const HS256 = { alg: 'HS256', typ: 'JWT' };

/** Every bad shell or Workhorse token: forged, expired, `alg: none`, wrong issuer, wrong key, no user. */
export function badTokens(key: Uint8Array, issuer: string): Record<string, string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, iat: now, exp: now + 60, gl_id: 'user-2' };
  return {
    forged: `${b64url(HS256)}.${b64url(claims)}.${'A'.repeat(43)}`,
    expired: jws(HS256, { ...claims, iat: now - 7_200, exp: now - 3_600 }, key),
    'alg none': jws({ alg: 'none', typ: 'JWT' }, claims, undefined),
    'wrong issuer': jws(
      HS256,
      { ...claims, iss: issuer === 'gitlab-shell' ? 'gitlab-workhorse' : 'gitlab-shell' },
      key,
    ),
    'wrong key': jws(HS256, claims, new TextEncoder().encode('not-the-shared-secret')),
    'no gl_id': jws(HS256, { iss: issuer, iat: now - 3_600 }, key),
  };
}

/** One bad `Authorization: GL-Geo …` value and what the primary's Rails answers it (mock-cell/README.md). */
export interface BadGeoToken {
  authorization: string;
  status: 401 | 403;
  text: string;
}

/**
 * Every bad GL-Geo token for `project` (GitLab `JwtRequestDecoder`, mock-cell/geo/token.ts), signed
 * as the node `node` would but wrong in one way each: forged signature, expired, `alg: none`, an
 * access key no site has (the wrong issuer), the wrong secret, no `<access_key>:` part, a valid token
 * replayed for `otherProject`, and one naming a user who does not exist.
 */
export async function badGeoTokens(
  node: GeoNodeKey,
  project: string,
  otherProject: string,
): Promise<Record<string, BadGeoToken>> {
  const now = Math.floor(Date.now() / 1000);
  const data = { scope: project, gl_id: 'user-3' };
  const claims = { data: JSON.stringify(data), iat: now, nbf: now - 5, exp: now + 60 };
  const bad = (authorization: string): BadGeoToken => ({ authorization, status: 401, text: 'Bad token' });
  const guessed: JwtKey = new TextEncoder().encode('not-the-secret-access-key');
  return {
    forged: bad(`GL-Geo ${node.accessKey}:${b64url(HS256)}.${b64url(claims)}.${'A'.repeat(43)}`),
    // GitLab's decoder raises InvalidSignatureTimeError for an expired one: its own text, trailing space.
    expired: { ...bad(await signGeoToken(node, data, now - 600)), text: 'Invalid signature time ' },
    'alg none': bad(`GL-Geo ${node.accessKey}:${jws({ alg: 'none', typ: 'JWT' }, claims, undefined)}`),
    'wrong issuer': bad(await signGeoToken({ ...node, accessKey: 'no-such-site-access-key' }, data)),
    'wrong key': bad(await signGeoToken({ ...node, secret: guessed }, data)),
    malformed: bad(`GL-Geo ${(await signGeoToken(node, data)).split(':').slice(1).join(':')}`),
    'replayed for another project': {
      authorization: await signGeoToken(node, { ...data, scope: otherProject }),
      status: 401,
      text: 'Unauthorized scope',
    },
    'unknown user': {
      authorization: await signGeoToken(node, { ...data, gl_id: 'user-999999' }),
      status: 403,
      text: 'Geo push user is invalid.',
    },
  };
}

/** An answer's status, the text of its body's start, and the time to its headers. */
export interface Timed {
  status: number;
  ms: number;
  text: string;
}

/** POST over HTTP/1.1 with a chunked body that never ends: the answer's status and its time. */
export async function h1Status(
  address: string,
  path: string,
  headers: Record<string, string>,
): Promise<Timed> {
  const conn = await rawConnect(address);
  const started = performance.now();
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  await conn.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n${head}\r\n4\r\n0000\r\n`,
  );
  let ms: number | undefined;
  let status = 0;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = conn.received().toString('latin1');
    const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
    if (m && ms === undefined) {
      ms = performance.now() - started;
      status = Number(m[1]);
    }
    // The body's first bytes (a short text answer) follow the headers closely.
    const body = got.indexOf('\r\n\r\n');
    const bodyCame = body >= 0 && got.length > body + 4;
    if (ms !== undefined && (bodyCame || performance.now() - started > ms + 500)) {
      conn.socket.destroy();
      return { status, ms, text: bodyCame ? got.slice(body + 4) : '' };
    }
    if (Date.now() > deadline) {
      conn.socket.destroy();
      return { status: 0, ms: Number.POSITIVE_INFINITY, text: '' };
    }
    await sleep(1);
  }
}

/** The same over HTTP/2: the request stream stays open; the answer's status, its time, its first data. */
export async function h2Status(url: string, path: string, headers: Record<string, string>): Promise<Timed> {
  const session = http2.connect(url);
  session.on('error', () => undefined);
  await new Promise((resolve) => session.once('connect', resolve));
  const started = performance.now();
  const answer = await new Promise<Timed>((resolve) => {
    let status = 0;
    let ms = Number.POSITIVE_INFINITY;
    const req = session.request({ ':method': 'POST', ':path': path, ...headers }, { endStream: false });
    const timer = setTimeout(() => resolve({ status, ms, text: '' }), 10_000);
    req.on('response', (h) => {
      status = Number(h[':status']);
      ms = performance.now() - started;
    });
    req.on('data', (c: Buffer) => {
      clearTimeout(timer);
      resolve({ status, ms, text: c.toString('utf8') });
    });
    const done = () => {
      clearTimeout(timer);
      resolve({ status, ms, text: '' });
    };
    req.on('end', done);
    req.on('close', done);
    req.on('error', done);
    req.write('0000');
  });
  session.destroy();
  return answer;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

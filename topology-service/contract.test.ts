import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOf, updateClaims } from './client.js';
import { TOPOLOGY_METHODS, topologyDefinition } from './protos.js';
import { cleanup, type StartedTopology, startTopology } from './test-support/harness.js';

/**
 * Golden bytes: the ClassifyRequest each client generation puts on the wire, written by hand from
 * the field numbers of ../shared/docs/topology-service.md §1.2–1.3 (never produced by our encoder),
 * sent as raw bytes to the real port, and the exact bytes of the answer.
 */
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const FINGERPRINT = 'n5TlGS2DvmbHHbh5ojUJjI0Ybt+ShnCxZ0qX8cP2JNs'; // 43 characters
const fp = Buffer.from(FINGERPRINT).toString('hex');

const GOLDEN = {
  /** gitlab-shell HEAD: `ClassifyRequest{claim (4): Claim{route (1): "gitlab-org"}}`. */
  shellRoute: hex('22 0c 0a 0a 6769746c61622d6f7267'),
  /** gitlab-shell HEAD, authorized_keys: `claim (4): Claim{ssh_key_fingerprint (15, tag 0x7a)}`. */
  shellFingerprint: hex(`22 2d 7a 2b ${fp}`),
  /** Newest proto: `claims (5): [Claim{route: "gitlab-org"}]`. */
  newestRoute: hex('2a 0c 0a 0a 6769746c61622d6f7267'),
  /** Newest proto, a chain: `claims: [{route: "nobody"}, {user_id (10, varint): 42}]`. */
  newestChain: hex('2a 08 0a 06 6e6f626f6479  2a 02 50 2a'),
  /** Oldest: `type (2): SESSION_PREFIX (2), value (3): "cell-2"`. */
  oldestSession: hex('10 02 1a 06 63656c6c2d32'),
  /** `{action (1): PROXY, proxy (2): {address: "cell-2.example"}, matched_claim (3): {route}}`. */
  answerRoute: hex('08 01 12 10 0a 0e 63656c6c2d322e6578616d706c65 1a 0c 0a 0a 6769746c61622d6f7267'),
  answerFingerprint: hex(`08 01 12 10 0a 0e 63656c6c2d322e6578616d706c65 1a 2d 7a 2b ${fp}`),
  answerUserId: hex('08 01 12 10 0a 0e 63656c6c2d322e6578616d706c65 1a 02 50 2a'),
  /** type/value answers carry no matched claim. */
  answerSession: hex('08 01 12 10 0a 0e 63656c6c2d322e6578616d706c65'),
};

let ts: StartedTopology;
let strict: StartedTopology;
let raw: grpc.Client;

function rawClassify(client: grpc.Client, body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      TOPOLOGY_METHODS.classify,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      (err, res) => (err || !res ? reject(err) : resolve(res)),
    ),
  );
}

beforeAll(async () => {
  ts = await startTopology();
  strict = await startTopology({ acceptClaimField4: false });
  for (const t of [ts, strict]) {
    await updateClaims(t.clients(), 2, [
      claimOf('route', 'gitlab-org'),
      claimOf('ssh_key_fingerprint', FINGERPRINT),
      claimOf('user_id', 42),
    ]);
  }
  raw = new grpc.Client(ts.grpc, grpc.credentials.createInsecure());
});

afterAll(async () => {
  raw?.close();
  await cleanup();
});

describe('ClassifyRequest on the wire', () => {
  const method = () =>
    topologyDefinition()['gitlab.cells.topology_service.ClassifyService'] as unknown as Record<
      string,
      grpc.MethodDefinition<object, object>
    >;

  it('our proto encodes each generation to the golden bytes', () => {
    const serialize = (req: object) => method().Classify?.requestSerialize(req);
    expect(serialize({ claim: { route: 'gitlab-org' } })).toEqual(GOLDEN.shellRoute);
    expect(serialize({ claim: { ssh_key_fingerprint: FINGERPRINT } })).toEqual(GOLDEN.shellFingerprint);
    expect(serialize({ claims: [{ route: 'gitlab-org' }] })).toEqual(GOLDEN.newestRoute);
    expect(serialize({ claims: [{ route: 'nobody' }, { user_id: '42' }] })).toEqual(GOLDEN.newestChain);
    expect(serialize({ type: 'SESSION_PREFIX', value: 'cell-2' })).toEqual(GOLDEN.oldestSession);
  });

  it.each([
    ['gitlab-shell HEAD (field 4), route', GOLDEN.shellRoute, GOLDEN.answerRoute],
    ['gitlab-shell HEAD (field 4), key fingerprint', GOLDEN.shellFingerprint, GOLDEN.answerFingerprint],
    ['newest (field 5)', GOLDEN.newestRoute, GOLDEN.answerRoute],
    ['newest, fallback chain', GOLDEN.newestChain, GOLDEN.answerUserId],
    ['oldest (type + value)', GOLDEN.oldestSession, GOLDEN.answerSession],
  ])('%s: the golden request gets the golden answer over a real port', async (_name, request, answer) => {
    expect((await rawClassify(raw, request)).toString('hex')).toBe(answer.toString('hex'));
  });

  it('a server that drops field 4 (newest proto only) fails gitlab-shell HEAD with INVALID_ARGUMENT', async () => {
    const client = new grpc.Client(strict.grpc, grpc.credentials.createInsecure());
    try {
      await expect(rawClassify(client, GOLDEN.shellRoute)).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'invalid type: "UNSPECIFIED"',
      });
      expect((await rawClassify(client, GOLDEN.newestRoute)).toString('hex')).toBe(
        GOLDEN.answerRoute.toString('hex'),
      );
    } finally {
      client.close();
    }
  });
});

describe('REST JSON both ways (golden)', () => {
  async function post(body: string): Promise<{ status: number; text: string }> {
    const res = await fetch(`${ts.http}/v1/classify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, text: await res.text() };
  }

  it.each([
    [
      '{"claims":[{"route":"gitlab-org"}]}',
      '{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":{"route":"gitlab-org"}}',
    ],
    [
      `{"claims":[{"sshKeyFingerprint":"${FINGERPRINT}"}]}`,
      `{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":{"sshKeyFingerprint":"${FINGERPRINT}"}}`,
    ],
    [
      `{"claims":[{"ssh_key_fingerprint":"${FINGERPRINT}"}],"someNewField":1}`,
      `{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":{"sshKeyFingerprint":"${FINGERPRINT}"}}`,
    ],
    [
      '{"claims":[{"route":"nobody"},{"user_id":42}]}',
      '{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":{"userId":"42"}}',
    ],
    [
      '{"claim":{"userId":"42"}}',
      '{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":{"userId":"42"}}',
    ],
    [
      '{"type":"SESSION_PREFIX","value":"cell-2"}',
      '{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":null}',
    ],
    ['{"type":3,"value":"2"}', '{"action":"PROXY","proxy":{"address":"cell-2.example"},"matchedClaim":null}'],
  ])('%s → %s', async (request, answer) => {
    expect(await post(request)).toEqual({ status: 200, text: answer });
  });

  it.each([
    [
      '{"claims":[{"route":"nobody"}]}',
      404,
      '{"code":5,"message":"claim does not exist: route \\"nobody\\"","details":[]}',
    ],
    ['{}', 400, '{"code":3,"message":"invalid type: \\"UNSPECIFIED\\"","details":[]}'],
    ['{"type":"CELL_ID","value":"9"}', 404, '{"code":5,"message":"cell 9 does not exist","details":[]}'],
  ])('%s → %i %s', async (request, status, answer) => {
    expect(await post(request)).toEqual({ status, text: answer });
  });
});

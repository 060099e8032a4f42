import { generateKeyPairSync, type KeyObject, randomInt } from 'node:crypto';
import { decodeCiJobToken, signCiJobToken, verifyCiJobTokenSignature } from '../../lib/ci-job-token.js';
import { signingNowSeconds } from '../../lib/clock.js';
import type { TopologyModel } from '../topology.js';
import type { TopologyProject, TopologyUser } from '../topology-types.js';

/**
 * CI job tokens as GitLab mints them for a job (`lib/ci-job-token.ts`): `c` the cell that runs the
 * job, `o` the project's organization, `u` the user, `p` the project, `g` its group (a group
 * namespace only); `exp` one hour (a job timeout) plus 5 minutes. The RS256 key pair is made on first
 * use and shared by the cells of the process.
 */
export const JOB_TIMEOUT_SECONDS = 3600;
export const JOB_TOKEN_LEEWAY_SECONDS = 300;

export class CiJobTokens {
  #key: { privateKey: KeyObject; publicKey: KeyObject; kid: string } | undefined;

  constructor(private readonly model: TopologyModel) {}

  get publicKey(): KeyObject {
    return this.keys().publicKey;
  }

  private keys() {
    this.#key ??= {
      ...generateKeyPairSync('rsa', { modulusLength: 2048 }),
      kid: `mock-cell-${randomInt(1e9).toString(36)}`,
    };
    return this.#key;
  }

  /**
   * The user of a job token this process minted for `cellId` and that has not expired (60 s leeway);
   * undefined for anything else (another process's key, another cell's job, forged, expired).
   */
  userOf(token: string, cellId: number): TopologyUser | undefined {
    const decoded = decodeCiJobToken(token);
    if (!decoded || !this.#key || !verifyCiJobTokenSignature(token, this.#key.publicKey)) return undefined;
    const exp = decoded.claims.exp;
    if (typeof exp !== 'number' || exp + 60 < signingNowSeconds()) return undefined;
    if (decoded.routing.c !== String(cellId) || decoded.routing.u === undefined) return undefined;
    return this.model.userById(Number(decoded.routing.u));
  }

  issue(cellName: string, user: TopologyUser, project: TopologyProject): string {
    const cell = this.model.cell(cellName);
    if (!cell) throw new Error(`unknown cell ${cellName}`);
    const ns = this.model.namespaceOf(project);
    const org = this.model.organizationOf(ns);
    const now = signingNowSeconds();
    const { privateKey, kid } = this.keys();
    return signCiJobToken(
      privateKey,
      kid,
      {
        sub: `gid://gitlab/Ci::Build/${randomInt(1, 2 ** 31)}`,
        iss: this.model.externalUrl,
        iat: now,
        exp: now + JOB_TIMEOUT_SECONDS + JOB_TOKEN_LEEWAY_SECONDS,
      },
      { c: cell.id, o: org.id, u: user.id, p: project.id, g: ns.kind === 'group' ? ns.id : undefined },
    );
  }
}

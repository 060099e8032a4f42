/**
 * @file What a world's control API may change in the Topology Service (`onControl('topology-service',
 * …)`): canned Classify answers per claim or for every claim, the next N calls failing with a code
 * (gitlab-shell's `ErrUntilAttempt`), a latency before every Classify, and which request shapes are
 * accepted (a server built from the newest proto ignores field 4). Shared by both transports.
 */
import type { status } from '@grpc/grpc-js';
import {
  type ControlArgs,
  grpcCodeArg,
  intArg,
  objectArg,
  oneOfArg,
  onlyArgs,
  requiredStringArg,
  stringArg,
} from '../lib/control-args.js';
import type { ClassifyRequest__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { Claim__Output } from '../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { ControlArgumentError } from '../lib/world-channel.js';
import { CLAIM_FIELDS } from './claims.js';
import { Injected } from './errors.js';

/** A claim as the control API and the journal write it: the `Claim` member's name and its value. */
export interface ClaimTypeValue {
  type: string;
  value: string;
}

type CannedAnswer =
  | { id: number; claim?: ClaimTypeValue; action: 'PROXY'; address: string }
  | { id: number; claim?: ClaimTypeValue; code: { name: string; code: status }; message: string };

/** What the world decided for one Classify before the service's own rules run. */
export interface WorldVerdict {
  /** An answer the world gave instead of the service (with the fault for the journal). */
  response?: ClassifyResponse;
  fault?: Record<string, unknown>;
  /** false: field 4 is ignored for this call (`requestShape {accept: 'field5-only'}`). */
  acceptClaimField4: boolean;
}

const CLAIM_TYPES: readonly string[] = CLAIM_FIELDS.map((f) => f.name);
const MAX_LATENCY_MS = 600_000;

/** The set member of a claim as `{type, value}`, or undefined when none is set. */
export function claimTypeValue(claim: Claim__Output | null | undefined): ClaimTypeValue | undefined {
  if (!claim) return undefined;
  const member =
    claim.claim ?? CLAIM_FIELDS.find((f) => claim[f.name] !== undefined && claim[f.name] !== null)?.name;
  if (member === undefined) return undefined;
  const value = claim[member as keyof Claim__Output];
  return { type: member, value: value === undefined || value === null ? '' : String(value) };
}

/** The claims a request carries, in its own order: field 5, else field 4 (when accepted). */
function requestClaims(req: ClassifyRequest__Output, field4: boolean): ClaimTypeValue[] {
  if (req.claims && req.claims.length > 0) return req.claims.flatMap((c) => claimTypeValue(c) ?? []);
  const single = field4 ? claimTypeValue(req.claim) : undefined;
  return single ? [single] : [];
}

const sameClaim = (a: ClaimTypeValue, b: ClaimTypeValue) =>
  a.type === b.type && a.value.toLowerCase() === b.value.toLowerCase();

function parseClaimArg(args: ControlArgs): ClaimTypeValue | undefined {
  const claim = objectArg(args, 'claim');
  if (!claim) return undefined;
  onlyArgs(claim, ['type', 'value']);
  const type = requiredStringArg(claim, 'type');
  if (!CLAIM_TYPES.includes(type))
    throw new ControlArgumentError(`claim.type must be one of ${CLAIM_TYPES.join(', ')}`);
  return { type, value: requiredStringArg(claim, 'value') };
}

export class TopologyWorld {
  private nextId = 1;
  private answers: CannedAnswer[] = [];
  private failing: { count: number; code: { name: string; code: status }; message: string } | undefined;
  private latencyMs = 0;
  private field5Only = false;

  /** `answer {claim?, action?: 'PROXY', address?, code?, message?}` → `{id}`. */
  answer(args: ControlArgs): { id: number } {
    onlyArgs(args, ['claim', 'action', 'address', 'code', 'message']);
    const claim = parseClaimArg(args);
    const id = this.nextId++;
    const base = { id, ...(claim ? { claim } : {}) };
    if (args.code !== undefined) {
      if (args.action !== undefined || args.address !== undefined)
        throw new ControlArgumentError('give either code (an error) or action/address (PROXY), not both');
      const code = grpcCodeArg(args, 'code');
      this.answers.push({
        ...base,
        code,
        message: stringArg(args, 'message') ?? `canned answer ${code.name}`,
      });
    } else {
      oneOfArg(args, 'action', ['PROXY'], 'PROXY');
      if (args.message !== undefined) throw new ControlArgumentError('message goes with code');
      this.answers.push({ ...base, action: 'PROXY', address: requiredStringArg(args, 'address') });
    }
    return { id };
  }

  /** `failNext {count, code, message?}`: the next `count` Classify calls fail with `code`. */
  failNext(args: ControlArgs): { count: number } {
    onlyArgs(args, ['count', 'code', 'message']);
    const count = intArg(args, 'count', 0, 1_000_000);
    const code = grpcCodeArg(args, 'code');
    const message = stringArg(args, 'message') ?? `injected ${code.name}`;
    this.failing = count > 0 ? { count, code, message } : undefined;
    return { count };
  }

  /** `latency {ms}`: every Classify waits `ms` first; 0 turns it off. */
  latency(args: ControlArgs): { ms: number } {
    onlyArgs(args, ['ms']);
    this.latencyMs = intArg(args, 'ms', 0, MAX_LATENCY_MS);
    return { ms: this.latencyMs };
  }

  /** `requestShape {accept: 'any' | 'field5-only'}`. */
  requestShape(args: ControlArgs): { accept: string } {
    onlyArgs(args, ['accept']);
    const accept = oneOfArg(args, 'accept', ['any', 'field5-only']);
    this.field5Only = accept === 'field5-only';
    return { accept };
  }

  reset(args: ControlArgs = {}): Record<string, never> {
    onlyArgs(args, []);
    this.answers = [];
    this.failing = undefined;
    this.latencyMs = 0;
    this.field5Only = false;
    return {};
  }

  /** Waits the configured latency (resolves at once when there is none). */
  async delay(): Promise<void> {
    const ms = this.latencyMs;
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  }

  get latencyFault(): Record<string, unknown> | undefined {
    return this.latencyMs > 0 ? { kind: 'latency', ms: this.latencyMs } : undefined;
  }

  /**
   * What the world decides for `req`: a failure of `failNext` or a canned error (thrown as an
   * `Injected` error), a canned PROXY answer, or nothing (the service answers, maybe without field 4).
   */
  decide(req: ClassifyRequest__Output, acceptClaimField4: boolean): WorldVerdict {
    if (this.failing) {
      const f = this.failing;
      f.count -= 1;
      if (f.count <= 0) this.failing = undefined;
      throw Injected(f.code.code, f.message, {
        kind: 'failNext',
        code: f.code.name,
        remaining: Math.max(f.count, 0),
      });
    }
    const field4 = acceptClaimField4 && !this.field5Only;
    const shapeFault =
      this.field5Only && !(req.claims && req.claims.length > 0) && req.claim
        ? { kind: 'requestShape', accept: 'field5-only' }
        : undefined;
    const canned = this.cannedFor(requestClaims(req, field4));
    if (!canned) return { acceptClaimField4: field4, ...(shapeFault ? { fault: shapeFault } : {}) };
    const fault = { kind: 'answer', id: canned.answer.id };
    if ('code' in canned.answer) throw Injected(canned.answer.code.code, canned.answer.message, fault);
    const response: ClassifyResponse = { action: 'PROXY', proxy: { address: canned.answer.address } };
    if (canned.matched) response.matched_claim = { [canned.matched.type]: canned.matched.value };
    return { response, fault, acceptClaimField4: field4 };
  }

  /** The newest canned answer for the first claim of the request that has one, else the newest catch-all. */
  private cannedFor(
    claims: ClaimTypeValue[],
  ): { answer: CannedAnswer; matched?: ClaimTypeValue } | undefined {
    const newestFirst = [...this.answers].reverse();
    for (const claim of claims) {
      const answer = newestFirst.find((a) => a.claim && sameClaim(a.claim, claim));
      if (answer) return { answer, matched: claim };
    }
    const any = newestFirst.find((a) => a.claim === undefined);
    return any ? { answer: any, ...(claims[0] ? { matched: claims[0] } : {}) } : undefined;
  }
}

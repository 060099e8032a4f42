/**
 * @file What a conformance check is (README "Conformance"): a small named module with the
 * gitlab-shell file or MR it comes from, what the router must be given (`needs`), and `run(ctx)`,
 * which programs the world, drives the router under test and judges from the world's journal.
 */
import type { StackJson } from '../lib/contracts/stack.js';
import type { CheckContext, RouterUnderTest } from './context.js';

/** What a router under test is reached by: its SSH front, its HTTP front. */
export type Need = 'ssh' | 'http';

export type Verdict =
  | { kind: 'pass' }
  | { kind: 'fail'; seen: string }
  | { kind: 'divergence'; reason: string }
  | { kind: 'not-run'; why: string };

export interface ConformanceCheck {
  /** `S5` (reference-cell.md §5.1 numbering; `H…` for the HTTP front, next slice). */
  id: string;
  /** What it asserts, in one line. */
  title: string;
  /** The gitlab-shell file or MR the expectation comes from. */
  source: string;
  needs: Need[];
  /**
   * A long edge case (`conformance/long-cases.ts`): it lasts about the edge's timeouts, so it runs
   * when they are short (a scaled edge), with `--long`, or when `--only` names it.
   */
  long?: boolean;
  /**
   * A long case's own longest wait against this router (default: the edge's, `longCaseWaitMs`), e.g.
   * S13-lfs waits out the router's Shell JWT TTL whatever the edge.
   */
  waitMs?(stack: StackJson, router: RouterUnderTest): number;
  run(ctx: CheckContext): Promise<Verdict>;
}

export const pass = (): Verdict => ({ kind: 'pass' });
export const fail = (seen: string): Verdict => ({ kind: 'fail', seen });
export const divergence = (reason: string): Verdict => ({ kind: 'divergence', reason });
export const notRun = (why: string): Verdict => ({ kind: 'not-run', why });

/** The first failing verdict of several judgements, else a pass. */
export function firstFailure(verdicts: Verdict[]): Verdict {
  return verdicts.find((v) => v.kind === 'fail') ?? pass();
}

/**
 * Every check can fail (README "Conformance"): on one kit world, the broken router double
 * (`test/conformance/doubles/`) runs once per breakage — our topology router with one GitLab
 * behaviour broken, reached by the kit over real sockets with real git, ssh and HTTP — and the
 * checks that breakage exists to catch each give FAIL with what was seen. With no breakage the
 * double passes the checks it relays (its legs break nothing by themselves).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verdict } from '../../conformance/check.js';
import { CHECKS } from '../../conformance/checks/index.js';
import { reportTable, runChecks } from '../../conformance/runner.js';
import { KIT_TOPOLOGY } from '../../conformance/world-plan.js';
import { startWorld, type World } from '../../fixture/index.js';
import { BROKEN_ROUTER, startBrokenRouter } from '../helpers/broken-router.js';
import { type CompiledPrograms, compilePrograms } from '../helpers/programs.js';
import { BREAKAGES } from './doubles/breakages.js';
import { ROUTES } from './fixtures/routes.js';

/** What each check must have seen against each breakage (exact, or a precise pattern). */
const SEEN: Record<string, Record<string, string | RegExp>> = {
  none: {
    S3: /^\/api\/v4\/internal\/(discover|personal_access_token|two_factor_recovery_codes) at conf_north 200 \(want the default cell conf_legacy\)$/,
  },
  'learn-mode': {
    S1: 'north-group/north-project.git: route claims []; /allowed at conf_legacy 404',
    S2: 'no Classify of an ssh_key_fingerprint claim',
    H5: '/john.doe: route claims [] (want "john.doe")',
    H6: /^18 of 42 paths: \/foo\/bar \(\/\*id\): at conf_legacy \(want route foo → conf_north\); .*; and 13 more$/,
  },
  'wrong-default-cell': {
    S5: 'NOT_FOUND: /allowed at conf_north 200 (want the legacy cell conf_legacy)',
    S7: /^UNAVAILABLE: clone exited 128: .*The project you were looking for could not be found/s,
    H7: '/api/v4/projects: Rails saw it at conf_north 404 (want conf_legacy)',
    H8: 'UNAVAILABLE: /north-group/north-project answered 302; Rails saw it at conf_north 302 (want conf_legacy)',
    H9: '/users/sign_in_path: Rails saw it at conf_north 200 (want conf_legacy)',
  },
  'retry-final-codes': { S5: 'NOT_FOUND: 3 Classify calls for route=north-group (want exactly 1)' },
  'transient-as-final': {
    S6: /^Classify of \{"type":"ssh_key_fingerprint","value":"[A-Za-z0-9+/]{43}"\} answered UNAVAILABLE$/,
  },
  'lenient-address': { S8: 'address "http://127.0.0.3": /allowed at conf_north 200 (want conf_legacy)' },
  'key-cell-ignored': { S2: "authorized_keys at conf_legacy 200 (the claim's cell is conf_north)" },
  'follow-redirects': { S9: '301 followed: /allowed also at conf_legacy 404' },
  'hide-message': {
    S10: /^403: exit 1, stderr ".*ERROR: Internal API error \(403\)/s,
    S19: /^exit 1, stderr ".*ERROR: Internal API error \(503\)/s,
  },
  'drop-retry-after': { S19: 'HTTP info/refs answered 503, Retry-After null (want 503, "60")' },
  'lfs-auth-to-default': {
    S4: '/allowed at conf_north 200, /lfs_authenticate at conf_legacy 404 (want both at conf_north)',
  },
  'drop-git-protocol': {
    S11: 'GIT_PROTOCOL=version=2: Git-Protocol header absent',
    S16: /^ls-remote exited 0; v2 false; refs "[0-9a-f]{40}\\tHEAD/,
  },
  'drop-gl-id': {
    S11: /^clone \(protocol 2\) exited 128: .*ERROR: Not found/s,
    S15: 'exit statuses 1, 1, 128 (want 0, 1, 128)',
  },
  'hide-cell-404': { S14: /^exit 1, stderr ".*ERROR: Bad Gateway.*" \(want "… Not found", exit 1\)$/s },
  'profile-14.56': {
    'S13-shape': '1 receive-pack request(s) for one push (want 2: a 0000 body, then the pack)',
  },
  'profile-14.57.2': {
    // The body stays open until git's stdin ends, which may come before or after the answer's end.
    'S12-shape':
      /^upload-pack body (still open when the answer ended|ended), ending ".*" \(want: ended after done with a flush-pkt added/,
  },
  'profile-14.57.4': {
    'S13-jwt': /^request 2: Shell JWT signed \d+\.\d s before the request \(want a fresh one\)$/,
  },
  'misread-token-prefix': {
    H4: 'prefixed runner token: answered 403, Rails saw it at conf_north 403 (want conf_south, or the legacy cell conf_legacy if not routed)',
  },
  'git-http-to-default': {
    S18: 'batch answered 404; Rails saw it at conf_legacy 404 (want conf_north)',
    H10: /^clone over HTTP exited 128: .*not found/s,
  },
  'cookie-before-token': {
    H1: 'runner-token rule before the cookie rule: Rails saw it at conf_south 302 (want conf_north)',
  },
  'no-cookie-rule': { H2: 'cookie of conf_south: Rails saw it at conf_legacy 302 (want conf_south)' },
  'no-runner-token-rule': { H3: 'routable runner token: Rails saw it at conf_legacy 403 (want conf_south)' },
  'stamp-cell-header': { H12: 'the answer was 302 with ["x-gitlab-cell-name"]' },
  'slow-first-byte': {
    H11: /^\/north-group\/north-project\.git\/info\/refs: front \[\d+, \d+, \d+\] ms vs cell \[\d+, \d+, \d+\] ms \(\+\d{4} ms\); \/north-group\/north-project: front .* \(\+\d{4} ms\)$/,
  },
};

/** Checks no router breakage can make fail (README "Every check can fail"). */
const CANNOT_FAIL = ['S3-cert', 'S17'];
/**
 * The long cases (not run in the short set): real router processes on an older profile fail them in
 * `npm run test:long` — behind a real edge (`test/long/rollouts.test.ts`, S20 in
 * `test/long/edge-buffering.test.ts`), and S13-lfs on 14.57.4 (`test/long/lfs-jwt.test.ts`).
 */
const FAIL_IN_LONG_RUN = ['S12', 'S13-long', 'S13-lfs', 'S20'];

const failing = (seen: string | RegExp): Verdict =>
  ({ kind: 'fail', seen: typeof seen === 'string' ? seen : expect.stringMatching(seen) }) as Verdict;

let world: World;
let programs: CompiledPrograms;
const start = (breakage: string) => startBrokenRouter(programs.path(BROKEN_ROUTER), world.dataDir, breakage);

beforeAll(async () => {
  [programs, world] = await Promise.all([
    compilePrograms([BROKEN_ROUTER]),
    startWorld({ topology: KIT_TOPOLOGY }),
  ]);
});

afterAll(async () => {
  await world?.stop();
  programs?.cleanup();
});

describe('every check can fail against a broken router double', () => {
  it('has a breakage for every check but those that cannot fail, and a message for each', () => {
    const covered = new Set(Object.values(BREAKAGES).flatMap((b) => b.fails));
    expect(CHECKS.map((c) => c.id).filter((id) => !covered.has(id))).toEqual(
      CHECKS.map((c) => c.id).filter((id) => [...CANNOT_FAIL, ...FAIL_IN_LONG_RUN].includes(id)),
    );
    for (const [name, b] of Object.entries(BREAKAGES))
      expect(Object.keys(SEEN[name] ?? {}), name).toEqual(b.fails);
  });

  it('relays without breaking anything when no behaviour is broken', async () => {
    const double = await start('none');
    try {
      // Each leg's relaying: Classify errors (S5), a 3xx passed back (S9), tunnels streamed both ways
      // with their timing (S11, S13-shape), rule classify and git over HTTP (H1, H10).
      const only = ['S1', 'S5', 'S9', 'S11', 'S13-shape', 'H1', 'H10'];
      const report = await runChecks(
        world.stackJson,
        { ssh: double.ssh, http: double.http, ours: false },
        { only },
      );
      expect(
        report.results.map((r) => [r.id, r.verdict.kind]),
        reportTable(report),
      ).toEqual(only.map((id) => [id, 'pass']));
    } finally {
      await double.stop();
    }
  });

  for (const [name, breakage] of Object.entries(BREAKAGES))
    it(`${name}: ${breakage.fails.join(', ')} FAIL`, async () => {
      const double = await start(name);
      try {
        const report = await runChecks(
          world.stackJson,
          { ssh: double.ssh, http: double.http, ours: false },
          { only: breakage.fails, routes: ROUTES },
        );
        const verdicts = Object.fromEntries(report.results.map((r) => [r.id, r.verdict]));
        const want = Object.fromEntries(Object.entries(SEEN[name] ?? {}).map(([id, s]) => [id, failing(s)]));
        expect(verdicts, reportTable(report)).toEqual(want);
      } finally {
        await double.stop();
      }
    });

  it('refuses a breakage it does not have, naming those it has (exit 78)', async () => {
    await expect(start('teleport')).rejects.toThrow(
      /exited 78:\nbroken-router: bad configuration: unknown --break teleport \(there are none, learn-mode, /,
    );
  });
});

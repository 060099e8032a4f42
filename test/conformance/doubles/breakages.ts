/**
 * @file The broken router double's breakages (README "Conformance", "Every check can fail"): each
 * is our topology router with ONE GitLab behaviour broken, by a real setting of the router or by the
 * double's man in the middle on an outbound leg (`cell-leg.ts`, `ts-leg.ts`). No switch in the
 * production router.
 *
 * | breakage               | fails              | how (why it is a broken router)                                                                          |
 * | ---------------------- | ------------------ | -------------------------------------------------------------------------------------------------------- |
 * | `none`                 | S3                 | our router as it is, judged as anyone's: a key session's account commands go to the user's cell          |
 * | `learn-mode`           | S1, S2, H5, H6     | setting `routing: learn`: no route or key claims reach the Topology Service                              |
 * | `wrong-default-cell`   | S5, S7, H7, H8, H9 | setting `cells`: `legacy` marks conf_north, so every fallback goes to the wrong default cell             |
 * | `retry-final-codes`    | S5                 | TS leg: NOT_FOUND / PERMISSION_DENIED / INVALID_ARGUMENT asked twice more (three Classify calls)         |
 * | `transient-as-final`   | S6                 | TS leg: UNAVAILABLE taken for final (the router gets NOT_FOUND): no retry                                |
 * | `lenient-address`      | S8                 | TS leg: a `proxy.address` with a scheme or a path is read as its host                                    |
 * | `key-cell-ignored`     | S2                 | TS leg: the cell an `ssh_key_fingerprint` claim names is replaced by the legacy cell                     |
 * | `follow-redirects`     | S9                 | cell leg: a 3xx on an internal call is followed (the POST asked again at the Location)                   |
 * | `hide-message`         | S10, S19           | cell leg: an `/allowed` refusal's `{message}` is dropped                                                 |
 * | `drop-retry-after`     | S19                | cell leg: `Retry-After` dropped from the cells' answers                                                  |
 * | `lfs-auth-to-default`  | S4                 | cell leg: `/lfs_authenticate` sent to the legacy cell, not the cell of `/allowed`                        |
 * | `drop-git-protocol`    | S11, S16           | cell leg: the tunnel's `Git-Protocol` header dropped                                                     |
 * | `drop-gl-id`           | S11, S15           | cell leg: the tunnel's Shell JWT re-signed without `gl_id` (the cell refuses it: a served command fails) |
 * | `hide-cell-404`        | S14                | cell leg: the cell's `404` on a tunnel turned into a `502` of the router's own                           |
 * | `profile-14.56`        | S13-shape          | setting `tunnelProfile: gitlab-shell-14.56`: one receive-pack request per push                           |
 * | `profile-14.57.2`      | S12-shape          | setting `tunnelProfile: gitlab-shell-14.57.2`: upload-pack's body kept open after negotiation            |
 * | `profile-14.57.4`      | S13-jwt            | setting `tunnelProfile: gitlab-shell-14.57.4`: push request 2 reuses request 1's JWT                     |
 * | `misread-token-prefix` | H4                 | cell leg: a token behind an instance-wide prefix (`acme-glrt-…`) sent to the routed project's cell       |
 * | `git-http-to-default`  | S18, H10           | cell leg: git and LFS over HTTP (`*.git/…`) sent to the legacy cell                                      |
 * | `cookie-before-token`  | H1                 | setting `rulesFile`: the session-cookie rule above the runner-token rule                                 |
 * | `no-cookie-rule`       | H2                 | setting `rulesFile`: no `_gitlab_session` rule                                                           |
 * | `no-runner-token-rule` | H3                 | setting `rulesFile`: no `runner-token` rule                                                              |
 * | `stamp-cell-header`    | H12                | cell leg: every HTTP answer carries `X-Gitlab-Cell-Name`                                                 |
 * | `slow-first-byte`      | H11                | cell leg: every answer of the HTTP front held 2 s before its first byte                                  |
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { INSTANCE_PREFIX } from '../../../conformance/checks/token-prefix.js';
import { ROUTED } from '../../../conformance/world-plan.js';
import type { StackJson } from '../../../lib/contracts/stack.js';
import { jwtKey, SHELL_HEADER, signShellJwt } from '../../../lib/jwt-sign.js';
import defaultRules from '../../../router/rules/default-rules.json' with { type: 'json' };
import type { CellLegHooks, LegRequest } from './cell-leg.js';
import type { TsLegHooks } from './ts-leg.js';

/** What a breakage is built from: the world, a folder of the double's own. */
export interface DoubleContext {
  stack: StackJson;
  dir: string;
}

export interface Breakage {
  /** The checks it exists to make fail. */
  fails: string[];
  /** Router settings over the world's topology router's. */
  settings?(ctx: DoubleContext, base: Record<string, unknown>): Record<string, unknown>;
  cell?(ctx: DoubleContext): CellLegHooks;
  topology?(ctx: DoubleContext): TsLegHooks;
}

const TUNNEL = /\/ssh-(upload|receive)-pack$/;
/** The codes gitlab-shell never asks again for. */
const FINAL = new Set<number>([status.NOT_FOUND, status.PERMISSION_DENIED, status.INVALID_ARGUMENT]);

/** The router's bundled HTTP rules with `edit` applied, written to the double's folder. */
function rules(ctx: DoubleContext, edit: (r: Array<{ id: string }>) => Array<{ id: string }>) {
  const out = join(ctx.dir, 'rules.json');
  writeFileSync(out, JSON.stringify(edit(defaultRules)));
  return { rulesFile: out };
}

const COOKIE = 'session_prefix_cookie_gitlab_session';
const RUNNER = 'session_token_header_runner_token';

/** A cell leg that changes requests only. */
const onRequest = (f: NonNullable<CellLegHooks['request']>) => (): CellLegHooks => ({ request: f });

export const BREAKAGES: Record<string, Breakage> = {
  none: { fails: ['S3'] },
  'learn-mode': {
    fails: ['S1', 'S2', 'H5', 'H6'],
    settings: (_ctx, base) => {
      const { topologyServiceAddress, topologyServiceUrl, cellEndpointScheme, cellEndpointPort, ...rest } =
        base;
      return { ...rest, routing: 'learn' };
    },
  },
  'wrong-default-cell': {
    fails: ['S5', 'S7', 'H7', 'H8', 'H9'],
    settings: (_ctx, base) => {
      const cells = base.cells as Array<{ legacy: boolean; name: string }>;
      const other = cells.find((c) => !c.legacy)?.name;
      return { ...base, cells: cells.map((c) => ({ ...c, legacy: c.name === other })) };
    },
  },
  'retry-final-codes': {
    fails: ['S5'],
    topology: () => ({
      async failed(err, call) {
        if (FINAL.has(err.code)) for (let i = 0; i < 2; i++) await call.again().catch(() => undefined);
        throw err;
      },
    }),
  },
  'transient-as-final': {
    fails: ['S6'],
    topology: () => ({
      async failed(err) {
        if (err.code !== status.UNAVAILABLE) throw err;
        throw Object.assign(new Error(err.details), { code: status.NOT_FOUND, details: err.details });
      },
    }),
  },
  'lenient-address': {
    fails: ['S8'],
    topology: () => ({
      answered(res) {
        const address = res.proxy?.address;
        if (!address || !res.proxy) return res;
        const lenient = address.replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '');
        return { ...res, proxy: { ...res.proxy, address: lenient } };
      },
    }),
  },
  'key-cell-ignored': {
    fails: ['S2'],
    topology: ({ stack }) => ({
      answered(res, call) {
        const legacy = new URL(stack.cells.find((c) => c.legacy)?.shellEndpoint ?? 'http://x').host;
        if (call.claim?.type !== 'ssh_key_fingerprint' || !res.proxy) return res;
        return { ...res, proxy: { ...res.proxy, address: legacy } };
      },
    }),
  },
  'follow-redirects': { fails: ['S9'], cell: () => ({ followRedirects: true }) },
  'hide-message': {
    fails: ['S10', 'S19'],
    cell: () => ({
      replaces: (req, status) => req.path.startsWith('/api/v4/internal/allowed') && status >= 400,
      replace: async (_req, status) => ({
        status,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: false }),
      }),
    }),
  },
  'drop-retry-after': {
    fails: ['S19'],
    cell: () => ({
      answerHeaders: (_req, headers) => {
        delete headers['retry-after'];
      },
    }),
  },
  'lfs-auth-to-default': {
    fails: ['S4'],
    cell: onRequest((req: LegRequest, legacy: string) => {
      if (req.path.startsWith('/api/v4/internal/lfs_authenticate')) req.cell = legacy;
    }),
  },
  'drop-git-protocol': {
    fails: ['S11', 'S16'],
    cell: onRequest((req) => {
      if (TUNNEL.test(req.path)) delete req.headers['git-protocol'];
    }),
  },
  'drop-gl-id': {
    fails: ['S11', 'S15'],
    cell: ({ stack }) => {
      const key = jwtKey(readFileSync(stack.secrets.shell, 'utf8'));
      return {
        request: async (req) => {
          if (TUNNEL.test(req.path)) req.headers[SHELL_HEADER] = await signShellJwt(key);
        },
      };
    },
  },
  'hide-cell-404': {
    fails: ['S14'],
    cell: () => ({
      replaces: (req, status) => TUNNEL.test(req.path) && status === 404,
      replace: async () => ({ status: 502, headers: { 'content-type': 'text/plain' }, body: 'Bad Gateway' }),
    }),
  },
  'profile-14.56': {
    fails: ['S13-shape'],
    settings: (_ctx, base) => ({ ...base, tunnelProfile: 'gitlab-shell-14.56' }),
  },
  'profile-14.57.2': {
    fails: ['S12-shape'],
    settings: (_ctx, base) => ({ ...base, tunnelProfile: 'gitlab-shell-14.57.2' }),
  },
  'profile-14.57.4': {
    fails: ['S13-jwt'],
    settings: (_ctx, base) => ({ ...base, tunnelProfile: 'gitlab-shell-14.57.4' }),
  },
  'misread-token-prefix': {
    fails: ['H4'],
    cell: onRequest((req) => {
      const token = String(req.headers['runner-token'] ?? req.headers['private-token'] ?? '');
      if (token.startsWith(INSTANCE_PREFIX)) req.cell = ROUTED.cell;
    }),
  },
  'git-http-to-default': {
    fails: ['S18', 'H10'],
    cell: onRequest((req, legacy) => {
      if (!req.path.startsWith('/api/') && !TUNNEL.test(req.path) && /\.git\//.test(req.path))
        req.cell = legacy;
    }),
  },
  'cookie-before-token': {
    fails: ['H1'],
    settings: (ctx, base) => ({
      ...base,
      ...rules(ctx, (r) => [...r.filter((x) => x.id === COOKIE), ...r.filter((x) => x.id !== COOKIE)]),
    }),
  },
  'no-cookie-rule': {
    fails: ['H2'],
    settings: (ctx, base) => ({ ...base, ...rules(ctx, (r) => r.filter((x) => x.id !== COOKIE)) }),
  },
  'no-runner-token-rule': {
    fails: ['H3'],
    settings: (ctx, base) => ({ ...base, ...rules(ctx, (r) => r.filter((x) => x.id !== RUNNER)) }),
  },
  'stamp-cell-header': {
    fails: ['H12'],
    cell: () => ({
      answerHeaders: (req, headers) => {
        if (!req.path.startsWith('/api/v4/internal/')) headers['x-gitlab-cell-name'] = req.cell;
      },
    }),
  },
  'slow-first-byte': {
    fails: ['H11'],
    cell: () => ({
      holdAnswerMs: (req) => (req.path.startsWith('/api/v4/internal/') || TUNNEL.test(req.path) ? 0 : 2000),
    }),
  },
};

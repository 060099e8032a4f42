/**
 * @file Checks of where the router sends a session's calls: by the key's fingerprint, by a Topology
 * Service address, and the follow-up LFS call (reference-cell.md §5.1 S2, S4, S8).
 */
import { type ConformanceCheck, fail, pass } from '../check.js';
import { ROUTED } from '../world-plan.js';
import { allowedOf, claimOf, isClassify, where } from './journal-views.js';

const UPLOAD = `git-upload-pack '${ROUTED.project}.git'`;

export const S2: ConformanceCheck = {
  id: 'S2',
  title: 'authorized_keys goes to the cell the ssh_key_fingerprint claim (43-char unpadded SHA-256) names',
  source: 'gitlab-shell internal/gitlabnet/authorizedkeys',
  needs: ['ssh'],
  async run(ctx) {
    const since = await ctx.cursor();
    await ctx.ssh(UPLOAD, {}, '0000');
    const entries = await ctx.journalSince(since);
    const fp = entries.find((e) => isClassify(e) && claimOf(e)?.type === 'ssh_key_fingerprint');
    if (!fp) return fail('no Classify of an ssh_key_fingerprint claim');
    const value = claimOf(fp)?.value ?? '';
    if (!/^[A-Za-z0-9+/]{43}$/.test(value)) return fail(`fingerprint claim ${JSON.stringify(value)}`);
    const owner = fp.fields?.cellName;
    const keys = entries.filter(
      (e) => e.service === 'rails' && e.endpoint === '/api/v4/internal/authorized_keys',
    );
    if (keys.length === 0 || keys.some((e) => e.cell !== owner))
      return fail(`authorized_keys at ${where(keys)} (the claim's cell is ${String(owner)})`);
    return pass();
  },
};

export const S8: ConformanceCheck = {
  id: 'S8',
  title:
    'a proxy.address with a scheme, a path, IPv6 or an empty host → legacy cell; any port → the cell endpoint port',
  source: 'gitlab-shell internal/command/shared/cells buildCellURL',
  needs: ['ssh'],
  async run(ctx) {
    const host = new URL(ctx.stack.cells.find((c) => c.name === ROUTED.cell)?.shellEndpoint ?? 'http://x')
      .hostname;
    const cases: Array<[string, string]> = [
      [`${host}:1`, ROUTED.cell],
      [`http://${host}`, ctx.legacyCell],
      [`${host}/cells`, ctx.legacyCell],
      ['[::1]:8080', ctx.legacyCell],
      [':8080', ctx.legacyCell],
    ];
    for (const [address, cell] of cases) {
      await ctx.control.topologyService.answer({
        claim: { type: 'route', value: ROUTED.group },
        proxy: address,
      });
      try {
        const since = await ctx.cursor();
        await ctx.ssh(UPLOAD, {}, '0000');
        const allowed = allowedOf(await ctx.journalSince(since));
        if (allowed.length === 0 || allowed.some((e) => e.cell !== cell))
          return fail(`address ${JSON.stringify(address)}: /allowed at ${where(allowed)} (want ${cell})`);
      } finally {
        await ctx.control.topologyService.reset();
      }
    }
    return pass();
  },
};

export const S4: ConformanceCheck = {
  id: 'S4',
  title: 'git-lfs-authenticate: /lfs_authenticate goes to the same cell as /allowed',
  source: 'gitlab-shell#837',
  needs: ['ssh'],
  async run(ctx) {
    const since = await ctx.cursor();
    const r = await ctx.ssh(`git-lfs-authenticate ${ROUTED.project}.git download`);
    const entries = await ctx.journalSince(since);
    const allowed = allowedOf(entries);
    const lfs = entries.filter(
      (e) => e.service === 'rails' && e.endpoint === '/api/v4/internal/lfs_authenticate',
    );
    if (r.code !== 0) return fail(`git-lfs-authenticate exited ${r.code}: ${r.stderr.trim()}`);
    if (allowed.length === 0 || lfs.length === 0 || [...allowed, ...lfs].some((e) => e.cell !== ROUTED.cell))
      return fail(
        `/allowed at ${where(allowed)}, /lfs_authenticate at ${where(lfs)} (want both at ${ROUTED.cell})`,
      );
    return pass();
  },
};

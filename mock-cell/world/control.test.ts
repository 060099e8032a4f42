import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCiJobToken, verifyCiJobTokenSignature } from '../../lib/ci-job-token.js';
import { hashedRepoPath } from '../../lib/repo-path.js';
import { ControlArgumentError } from '../../lib/world-channel.js';
import { demoModel, tempDir } from '../test-support/fixtures.js';
import { railsControlHandlers } from './control.js';
import { CiJobTokens } from './job-tokens.js';
import { RailsWorld } from './rails-world.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const model = demoModel(tmp.dir);
const world = new RailsWorld();
const jobTokens = new CiJobTokens(model);
const ops = railsControlHandlers({ world, model, cells: ['cell_us0', 'cell_eu0'], jobTokens });
const op = (name: string) => ops[name] as NonNullable<(typeof ops)[string]>;

describe('rails control ops', () => {
  it('program, list and clear faults per cell; reset also ends maintenance', async () => {
    expect(await op('fault')({ endpoint: '/api/v4/internal/allowed', status: 503 }, 'cell_eu0')).toEqual({
      id: 'cell_eu0-fault-1',
    });
    expect(world.faultsOf('cell_us0').list()).toHaveLength(0);
    expect(((await op('faults')({}, 'cell_eu0')) as { faults: unknown[] }).faults).toHaveLength(1);
    expect(await op('clearFaults')({}, 'cell_eu0')).toEqual({ cleared: 1 });
    await op('fault')({ endpoint: '/x', reset: true }, 'cell_eu0');
    await op('maintenance')({ organization: 'my-organization', state: 'indefinite' }, 'cell_eu0');
    expect(await op('reset')({}, 'cell_eu0')).toEqual({ cleared: 1, maintenance: 'off' });
    expect(world.maintenance.status('my-organization')).toEqual({ state: 'active' });
  });

  it('refuses bad arguments, a missing cell and a cell the process does not serve', async () => {
    expect(() => op('fault')({ endpoint: 'nope' }, 'cell_eu0')).toThrow(ControlArgumentError);
    expect(() => op('fault')({ endpoint: '/x', status: 500 }, undefined)).toThrow(/names its cell/);
    expect(() => op('fault')({ endpoint: '/x', status: 500 }, 'cell_mars')).toThrow(/unknown cell cell_mars/);
    expect(() => op('maintenance')({ organization: 'nowhere', state: 'off' }, 'cell_eu0')).toThrow(
      /unknown organization/,
    );
    expect(() => op('maintenance')({ organization: 'my-organization', state: 'soon' }, 'cell_eu0')).toThrow(
      /state must be/,
    );
    expect(() =>
      op('maintenance')({ organization: 'my-organization', state: 'indefinite', reason: 'x' }, 'cell_eu0'),
    ).toThrow(/reason/);
    await expect(
      op('moveOrganization')({ organization: 'my-organization', cell: 'cell_mars' }, 'cell_eu0'),
    ).rejects.toThrow(/unknown cell/);
  });

  it('sets maintenance (time-bounded → 503 + 60 s, indefinite → 403, off) for the whole process', async () => {
    expect(
      await op('maintenance')({ organization: 'my-organization', state: 'time-bounded' }, 'cell_us0'),
    ).toEqual({
      organization: 'my-organization',
      state: 'maintenance',
      reason: 'migration',
      refusal: {
        status: 503,
        message: 'This organization is temporarily unavailable due to maintenance.',
        retryAfter: 60,
      },
    });
    expect(
      await op('maintenance')({ organization: 'my-organization', state: 'indefinite' }, 'cell_us0'),
    ).toMatchObject({
      refusal: { status: 403, message: 'This organization is unavailable.' },
    });
    expect(
      await op('maintenance')({ organization: 'my-organization', state: 'off' }, 'cell_us0'),
    ).toMatchObject({ state: 'active', refusal: null });
  });

  it('moves an organization with its repositories', async () => {
    const from = join(tmp.dir, 'cell_us1', hashedRepoPath(5));
    mkdirSync(from, { recursive: true });
    const result = await op('moveOrganization')(
      { organization: 'not-my-organization', cell: 'cell_eu0' },
      'cell_us0',
    );
    expect(result).toMatchObject({ organization: 'not-my-organization', from: 'cell_us1', to: 'cell_eu0' });
    expect(model.organization('not-my-organization')?.cell).toBe('cell_eu0');
    expect(existsSync(join(tmp.dir, 'cell_eu0', hashedRepoPath(5)))).toBe(true);
  });

  it('issues glcbt- job tokens routing to the cell, organization, user, project and group', () => {
    const { token } = op('issueJobToken')(
      { user: 'alice', project: 'my-company/my-project' },
      'cell_eu0',
    ) as { token: string };
    expect(decodeCiJobToken(token)?.routing).toEqual({
      c: String(model.cell('cell_eu0')?.id),
      o: '3',
      u: '2',
      p: '3',
      g: '3',
    });
    expect(verifyCiJobTokenSignature(token, jobTokens.publicKey)).toBe(true);
    expect(() =>
      op('issueJobToken')({ user: 'nobody', project: 'my-company/my-project' }, 'cell_eu0'),
    ).toThrow(/unknown user/);
  });
});

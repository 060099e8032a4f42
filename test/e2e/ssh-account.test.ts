import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRoutableToken } from '../../lib/routable-token.js';
import { HttpClient } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/poll.js';
import { run } from '../helpers/run.js';
import { type RunningStack, startStack } from '../helpers/stack.js';

/**
 * The demo stack's router as gitlab-sshd with real OpenSSH: every host key type the stack generated
 * (checked against its known_hosts), and the account commands, routed to the user's cell (alice's
 * namespace is in cell_eu0) and served by the mock cell's internal endpoints.
 */
let stack: RunningStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

function ssh(user: string, command: string, input = '', options: string[] = []) {
  const args = stack.sshCommand(user).split(' ').slice(1);
  return run('ssh', [...args, ...options, '-p', String(stack.sshPort), 'git@127.0.0.1', command], {
    env: stack.gitEnv(user),
    input,
    timeoutMs: 60_000,
  });
}

/** Lines of every service log of the stack that contain `text`. */
function logLines(text: string): string[] {
  const dir = join(stack.dataDir, 'logs');
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l.includes(text)),
  );
}

describe("the stack's host keys", () => {
  it.each(['ssh-ed25519', 'ecdsa-sha2-nistp256', 'rsa-sha2-512', 'rsa-sha2-256'])(
    'serves %s, checked against the known_hosts the stack wrote',
    async (algorithm) => {
      const r = await ssh('alice', '', '', ['-o', `HostKeyAlgorithms=${algorithm}`]);
      expect(r.stdout).toBe('Welcome to GitLab, @alice!\n');
      expect(r.code).toBe(0);
    },
  );
});

describe('personal_access_token', () => {
  it("mints a routable token on the user's cell that the HTTP front routes back there", async () => {
    const r = await ssh('alice', 'personal_access_token ci-token api,read_repository 7');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [tokenLine, scopesLine, expiresLine] = r.stdout.split('\n');
    const token = /^Token: {3}(glpat-\S+)$/.exec(tokenLine ?? '')?.[1] ?? '';
    expect(scopesLine).toBe('Scopes:  api,read_repository');
    const expected = new Date(Date.now() + 8 * 86_400_000).toISOString().slice(0, 10);
    expect(expiresLine).toBe(`Expires: ${expected}`);
    expect(decodeRoutableToken(token).fields.c).toBe('3');

    const me = await new HttpClient(stack.json.router.http).request('GET', '/api/v4/user', {
      headers: { 'private-token': token },
    });
    expect([me.status, me.cell, JSON.parse(me.body).username]).toEqual([200, 'cell_eu0', 'alice']);
  });

  it("refuses bad usage and scopes with gitlab-shell's and Rails' messages", async () => {
    const usage = await ssh('alice', 'personal_access_token only-a-name');
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain(
      'remote: ERROR: Usage: personal_access_token <name> <scope1[,scope2,...]> [ttl_days]',
    );
    const ttl = await ssh('alice', 'personal_access_token n api soon');
    expect(ttl.stderr).toContain("ERROR: Invalid value for days_ttl: 'soon'");
    const scope = await ssh('alice', 'personal_access_token n api,everything');
    expect(scope.code).toBe(1);
    expect(scope.stderr).toContain("ERROR: Invalid scope: 'everything'. Valid scopes are: [");
  });
});

describe('two-factor commands', () => {
  const REGENERATED = 'two-factor recovery codes regenerated';

  it('2fa_recovery_codes answered "no" changes nothing; "yes" prints new codes', async () => {
    const no = await ssh('alice', '2fa_recovery_codes', 'no\n');
    expect(no.code).toBe(0);
    expect(no.stdout).toBe(
      'Are you sure you want to generate new two-factor recovery codes?\n' +
        'Any existing recovery codes you saved will be invalidated. (yes/no)\n' +
        '\nNew recovery codes have *not* been generated. Existing codes will remain valid.\n',
    );
    expect(logLines(REGENERATED)).toEqual([]);

    const yes = await ssh('alice', '2fa_recovery_codes', 'yes\n');
    expect(yes.code).toBe(0);
    expect(yes.stdout).toContain('Your two-factor authentication recovery codes are:\n\n');
    const codes = yes.stdout.split('\n').filter((l) => /^[0-9a-f]{16}$/.test(l));
    expect(codes).toHaveLength(10);
    await waitUntil(() => logLines(REGENERATED).length === 1, 10_000, 'one regeneration on the cell');
    expect(logLines(REGENERATED)[0]).toContain('cell_eu0');
  });

  it('2fa_verify prompts for the OTP and prints the verdict of the cell (GitLab CE: not available)', async () => {
    const r = await ssh('alice', '2fa_verify', '123456\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('OTP: \nOTP validation failed: Feature is not available\n');
    const blank = await ssh('alice', '2fa_verify', '\n');
    expect(blank.stdout).toBe('OTP: \nOTP validation failed: OTP cannot be blank\n');
  });
});

describe('git-lfs-authenticate', () => {
  it('answers the JSON GitLab returns: header, href, expires_in', async () => {
    const r = await ssh('alice', "git-lfs-authenticate 'my-company/my-project.git' download");
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const payload = JSON.parse(r.stdout) as {
      header: { Authorization: string };
      href: string;
      expires_in: number;
    };
    expect(Object.keys(payload)).toEqual(['header', 'href', 'expires_in']);
    expect(payload.href).toMatch(/\/my-company\/my-project\.git\/info\/lfs$/);
    expect(payload.expires_in).toBe(7200);
    const basic = Buffer.from(payload.header.Authorization.replace(/^Basic /, ''), 'base64').toString();
    expect(basic).toMatch(/^alice:[0-9a-f]{40}$/);
  });

  it('refuses an unknown operation and a project the user may not write', async () => {
    const op = await ssh('alice', "git-lfs-authenticate 'my-company/my-project.git' delete");
    expect([op.code, op.stderr.includes('ERROR: Disallowed command')]).toEqual([1, true]);
    const denied = await ssh('bob', "git-lfs-authenticate 'my-company/my-project.git' upload");
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/ERROR: /);
  });
});

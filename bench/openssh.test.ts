import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenSecondsOfTimes, forcedCommandGitCpu, sshdConfig, wrapperScript } from './openssh.js';

const exec = promisify(execFile);

describe('the forced-command wrapper', () => {
  let dir: string;
  let wrapper: string;
  let cpuDir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bench-wrapper-'));
    // A fake `git` that prints what it was asked to run.
    await writeFile(join(dir, 'git'), '#!/bin/sh\necho "git $*"\n');
    await chmod(join(dir, 'git'), 0o755);
    wrapper = join(dir, 'git-only.sh');
    cpuDir = join(dir, "cpu o'clock");
    await mkdir(cpuDir);
    await writeFile(
      wrapper,
      wrapperScript({ 'group/project': '/srv/repos/p.git', 'g/o d': "/srv/it's.git" }, cpuDir),
    );
    await chmod(wrapper, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const runAs = (command: string) =>
    exec('/bin/sh', [wrapper], { env: { PATH: `${dir}:/usr/bin:/bin`, SSH_ORIGINAL_COMMAND: command } });

  it('runs upload-pack and receive-pack on the mapped repository', async () => {
    expect((await runAs("git-upload-pack '/group/project.git'")).stdout).toBe(
      'git upload-pack /srv/repos/p.git\n',
    );
    expect((await runAs("git-receive-pack 'group/project.git'")).stdout).toBe(
      'git receive-pack /srv/repos/p.git\n',
    );
    expect((await runAs("git-upload-pack '/g/o d.git'")).stdout).toBe("git upload-pack /srv/it's.git\n");
  });

  it("keeps git's exit status and records its CPU in one file per session", async () => {
    await rm(cpuDir, { recursive: true });
    await mkdir(cpuDir);
    await writeFile(join(dir, 'git'), '#!/bin/sh\necho "git $*"\nexit 3\n');
    try {
      await expect(runAs("git-upload-pack '/group/project.git'")).rejects.toMatchObject({
        code: 3,
        stdout: 'git upload-pack /srv/repos/p.git\n',
      });
    } finally {
      await writeFile(join(dir, 'git'), '#!/bin/sh\necho "git $*"\n');
    }
    expect(await readdir(cpuDir)).toHaveLength(1);
    const total = forcedCommandGitCpu(cpuDir);
    expect(total()).toBeGreaterThanOrEqual(0);
    expect(await readdir(cpuDir)).toHaveLength(0);
  });

  it('refuses other commands and unknown or crafted paths', async () => {
    await expect(runAs('sh -c id')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('only git-'),
    });
    await expect(runAs("git-upload-pack '/other/repo.git'")).rejects.toMatchObject({
      stderr: expect.stringContaining('no such repository'),
    });
    await expect(runAs("git-upload-pack '/group/project.git'; id")).rejects.toMatchObject({ code: 1 });
    await expect(runAs('')).rejects.toMatchObject({ code: 1 });
  });
});

describe('times output', () => {
  it("adds the children's user and system seconds (dash and bash formats)", () => {
    expect(childrenSecondsOfTimes('0m0.004000s 0m0.000000s\n0m1.250000s 1m0.500000s\n')).toBeCloseTo(61.75);
    expect(childrenSecondsOfTimes('0m0.003s 0m0.001s\n0m0.120s 0m0.030s\n')).toBeCloseTo(0.15);
  });

  it('is undefined while the file is still empty or half written', () => {
    expect(childrenSecondsOfTimes('')).toBeUndefined();
    expect(childrenSecondsOfTimes('0m0.004000s 0m0.000000s\n')).toBeUndefined();
  });
});

describe('sshd config', () => {
  it('listens on loopback only, without a pid file or PAM, and forces the wrapper through authorized_keys', () => {
    const text = sshdConfig({ port: 2200, hostKey: '/k', authorizedKeys: '/a', user: 'git' });
    for (const line of [
      'ListenAddress 127.0.0.1',
      'Port 2200',
      'PidFile none',
      'UsePAM no',
      'StrictModes no',
      'AuthorizedKeysFile /a',
      'AllowUsers git',
      'PasswordAuthentication no',
      'MaxStartups 1000',
    ]) {
      expect(text.split('\n')).toContain(line);
    }
  });
});

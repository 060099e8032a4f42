/**
 * @file The servers of one run: the private OpenSSH, nginx + fcgiwrap, the stack with its
 * stream-mode bridge, and the gRPC floor. Each may fail to start on its own (its contenders then
 * fail with the error); `stopAll` ends every one and kills whatever the run left behind.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { log, PROJECTS, STREAM_BRIDGE } from './bench-data.js';
import type { GitServers } from './contenders.js';
import { type GrpcFloor, startGrpcFloor } from './grpc-floor.js';
import { type NginxServer, startNginx } from './nginx.js';
import { type OpenSshServer, startOpenSsh } from './openssh.js';
import type { BenchOptions } from './options.js';
import type { FailureLog, Outcome } from './outcome.js';
import { killTracked } from './proc.js';
import { type BenchStack, type ExtraBridge, startBenchStack, startExtraBridge } from './stack-runner.js';

/** The folders of the repositories the servers serve. */
export interface ServedDirs {
  large: string;
  small: string;
  history: string;
}

/** How each server's start went. */
export interface ServerStarts {
  sshdStart: Outcome<void>;
  stackStart: Outcome<void>;
  floorStart: Outcome<void>;
  nginxStart: Outcome<void>;
}

export class RunServers {
  sshd: OpenSshServer | undefined;
  nginx: NginxServer | undefined;
  stack: BenchStack | undefined;
  floor: GrpcFloor | undefined;
  streamBridge: ExtraBridge | undefined;
  streamBridgeStart: Outcome<void> = { ok: false, error: 'not started' };

  constructor(
    private readonly opts: BenchOptions,
    private readonly runDir: string,
    private readonly stackEnv: Record<string, string>,
    private readonly failures: FailureLog,
  ) {}

  /** OpenSSH, nginx, the stack (with the stream-mode bridge) and the gRPC floor, one after the other. */
  async start(dirs: ServedDirs, profileDir: string | undefined): Promise<ServerStarts> {
    const repos = {
      [PROJECTS.large.path]: dirs.large,
      [PROJECTS.small.path]: dirs.small,
      [PROJECTS.history.path]: dirs.history,
    };
    const sshdStart = await this.failures.attempt('starting the OpenSSH server', async () => {
      this.sshd = await startOpenSsh(join(this.runDir, 'sshd'), repos);
      log(`OpenSSH server on 127.0.0.1:${this.sshd.port} (pid ${this.sshd.pid})`);
    });
    const nginxStart = await this.failures.attempt('starting nginx + fcgiwrap', async () => {
      this.nginx = await startNginx(join(this.runDir, 'nginx'), repos, {
        fcgiChildren: this.opts.fcgiChildren,
        maxConcurrency: Math.max(...this.opts.concurrency),
      });
      log(
        `nginx on 127.0.0.1:${this.nginx.port} (pid ${this.nginx.pid}), ${this.opts.fcgiChildren} fcgiwrap processes`,
      );
    });
    if (profileDir) {
      await rm(profileDir, { recursive: true, force: true });
      await mkdir(profileDir, { recursive: true });
    }
    const stackStart = await this.failures.attempt('starting the stack', async () => {
      this.stack = await startBenchStack(this.runDir, { env: this.stackEnv, timeoutMs: 120_000 });
      log(`stack up: router ssh ${this.stack.json.router.ssh}, pids ${JSON.stringify(this.stack.json.pids)}`);
    });
    if (this.stack) await this.startStreamBridge(this.stack);
    const floorStart = await this.failures.attempt('starting the gRPC floor server', async () => {
      this.floor = await startGrpcFloor();
    });
    return { sshdStart, stackStart, floorStart, nginxStart };
  }

  /** The stream-mode bridge beside the stack's (the stream contenders fail with its error when it cannot start). */
  private async startStreamBridge(stack: BenchStack): Promise<void> {
    this.streamBridgeStart = await this.failures.attempt('starting the stream-mode bridge', async () => {
      this.streamBridge = await startExtraBridge(stack, PROJECTS.large.cell, STREAM_BRIDGE, {
        overrides: { gitalyUploadPack: 'stream' },
        env: this.stackEnv,
        timeoutMs: 30_000,
      });
      log(`stream-mode bridge on ${this.streamBridge.url} (pid ${this.streamBridge.pid})`);
    });
  }

  /** The git contenders' servers and how their start went. */
  gitServers(starts: ServerStarts): GitServers {
    return {
      sshd: this.sshd,
      stack: this.stack,
      nginx: this.nginx,
      sshdStart: starts.sshdStart,
      stackStart: starts.stackStart,
      nginxStart: starts.nginxStart,
    };
  }

  /** Stops the stack and its stream-mode bridge (the last workloads start stacks of their own). */
  async stopStack(): Promise<void> {
    await this.streamBridge
      ?.stop()
      .catch((err: unknown) => this.failures.record('stopping the stream-mode bridge', err));
    await this.stack?.stop().catch((err: unknown) => this.failures.record('stopping the stack', err));
    this.streamBridge = undefined;
    this.stack = undefined;
  }

  async stopAll(): Promise<void> {
    await this.stopStack();
    await this.sshd?.stop().catch((err: unknown) => this.failures.record('stopping sshd', err));
    await this.nginx?.stop().catch((err: unknown) => this.failures.record('stopping nginx', err));
    await this.floor?.stop().catch((err: unknown) => this.failures.record('stopping the gRPC floor', err));
    this.sshd = undefined;
    this.nginx = undefined;
    this.floor = undefined;
    const killed = killTracked();
    if (killed > 0)
      this.failures.record('cleanup', new Error(`${killed} benchmark processes had to be killed`));
  }

  /** The stack's services and the benchmark's stream-mode bridge. */
  get stackPids(): Record<string, number> {
    const extra = this.streamBridge ? { [STREAM_BRIDGE]: this.streamBridge.pid } : {};
    return { ...(this.stack?.json.pids ?? {}), ...extra };
  }
}

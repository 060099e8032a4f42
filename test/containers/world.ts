import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  GenericContainer,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
  type WaitStrategy,
} from 'testcontainers';
import { parse } from 'yaml';
import { projectRoot } from '../../lib/proto.js';
import { type Engine, engineGet } from './engine.js';

type Container = Parameters<WaitStrategy['waitUntilReady']>[0];
type RunningEngine = Extract<Engine, { ok: true }>;

export interface ComposeHealthcheck {
  test?: string[];
  interval?: string;
  timeout?: string;
  retries?: number;
  start_period?: string;
  disable?: boolean;
}

/** The part of a compose service this suite realizes. */
export interface ComposeService {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  user?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  expose?: string[];
  restart?: string;
  networks?: string[];
  profiles?: string[];
  healthcheck?: ComposeHealthcheck;
  depends_on?: Record<string, { condition: string }>;
}

export interface ComposeFile {
  name: string;
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
  networks: Record<string, unknown>;
}

export const COMPOSE_FILE = join(projectRoot(), 'compose.yaml');
export const LABEL = 'org.gitlab-cells-ssh.test';

/** `${VAR}` and `${VAR:-default}` as compose interpolates them. */
export function interpolate(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, dflt?: string) => {
    const value = env[name];
    return value === undefined || value === '' ? (dflt ?? '') : value;
  });
}

/** compose.yaml with anchors merged and variables interpolated. */
export function loadCompose(file = COMPOSE_FILE, env: NodeJS.ProcessEnv = {}): ComposeFile {
  return parse(interpolate(readFileSync(file, 'utf8'), env), { merge: true }) as ComposeFile;
}

/** A compose duration (`5s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMs(value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  let total = 0;
  for (const [, n, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
  }
  return total || fallback;
}

/** The services in start order: each after everything it depends on (batches that may start together). */
export function startOrder(compose: ComposeFile, names: string[]): string[][] {
  const batches: string[][] = [];
  const placed = new Set<string>();
  let left = [...names];
  while (left.length > 0) {
    const ready = left.filter((n) =>
      Object.keys(compose.services[n]?.depends_on ?? {}).every((d) => placed.has(d) || !names.includes(d)),
    );
    if (ready.length === 0) throw new Error(`compose.yaml: a depends_on cycle among ${left.join(', ')}`);
    batches.push(ready);
    for (const n of ready) placed.add(n);
    left = left.filter((n) => !placed.has(n));
  }
  return batches;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function logTail(container: Container, lines = 30): Promise<string> {
  const buf = (await container.logs({
    stdout: true,
    stderr: true,
    tail: lines,
    follow: false,
  })) as unknown as Buffer;
  return demux(Buffer.from(buf));
}

/** Docker's multiplexed log stream ([stream, 0, 0, 0, len BE] frames) as text; plain text stays as is. */
export function demux(buf: Buffer): string {
  const out: Buffer[] = [];
  let at = 0;
  while (at + 8 <= buf.length && (buf[at] === 1 || buf[at] === 2) && buf[at + 1] === 0) {
    const len = buf.readUInt32BE(at + 4);
    out.push(buf.subarray(at + 8, at + 8 + len));
    at += 8 + len;
  }
  if (at === 0) return buf.toString('utf8');
  return Buffer.concat(out).toString('utf8');
}

/**
 * `condition: service_healthy`: the container's own healthcheck (compose.yaml) passes; without a
 * service name, no wait (one-shot containers, watched by the caller). Docker runs healthchecks itself; podman schedules them through systemd only, so on podman each poll runs the
 * check through the libpod API, which records the result as the engine's health status.
 */
class HealthyWait implements WaitStrategy {
  private timeoutMs = 120_000;

  constructor(
    private readonly engine: RunningEngine,
    private readonly service: string | undefined,
  ) {}

  async waitUntilReady(container: Container): Promise<void> {
    if (this.service) await waitHealthy(this.engine, container, this.service, this.timeoutMs);
  }

  withStartupTimeout(startupTimeoutMs: number): this {
    this.timeoutMs = startupTimeoutMs;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return true;
  }

  getStartupTimeout(): number {
    return this.timeoutMs;
  }
}

export async function waitHealthy(
  engine: RunningEngine,
  container: Container,
  service: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no health status yet';
  while (Date.now() < deadline) {
    const state = (await container.inspect()).State;
    if (!state.Running && !state.Restarting) {
      throw new Error(
        `${service} exited (code ${state.ExitCode}) before it was healthy:\n${await logTail(container)}`,
      );
    }
    if (engine.podman && engine.socketPath && state.Running) {
      // the engine runs the check (a node process in the container) before it answers: on a loaded
      // machine one run may outlast a poll's timeout, which is one more unhealthy poll, not a failure
      const path = `/v4.0.0/libpod/containers/${container.id}/healthcheck`;
      const pollMs = Math.max(1_000, Math.min(30_000, deadline - Date.now()));
      const r = await engineGet(engine.socketPath, path, pollMs).catch((err: Error) => ({
        status: 0,
        body: err.message,
      }));
      if (r.status === 200 && (JSON.parse(r.body) as { Status: string }).Status === 'healthy') return;
      last = r.body.trim();
    } else {
      const health = (state as { Health?: { Status: string } }).Health;
      if (health?.Status === 'healthy') return;
      last = health?.Status ?? last;
    }
    await delay(500);
  }
  throw new Error(`${service} not healthy within ${timeoutMs} ms (${last}):\n${await logTail(container)}`);
}

/** A compose service as a testcontainers container: restart policy, named volumes, loopback ports. */
class ServiceContainer extends GenericContainer {
  constructor(image: string) {
    super(image);
  }

  /**
   * On `network` only, reached there as `alias`. (testcontainers' withNetworkAliases would create the
   * container on the engine's default network first and connect it to `network` after.)
   */
  withOnlyNetwork(network: string, alias: string): this {
    this.withNetworkMode(network);
    this.createOpts.NetworkingConfig = { EndpointsConfig: { [network]: { Aliases: [alias] } } };
    return this;
  }

  /** `healthcheck: disable: true`: not even the image's HEALTHCHECK. */
  withoutHealthCheck(): this {
    this.createOpts.Healthcheck = { Test: ['NONE'] };
    return this;
  }

  withRestartPolicy(name: string | undefined): this {
    if (name && name !== 'no') this.hostConfig.RestartPolicy = { Name: name };
    return this;
  }

  /** `named-volume:/path[:ro]` with the run's own volume names. */
  withVolumes(specs: string[], volumeName: (name: string) => string): this {
    this.hostConfig.Binds = specs.map((spec) => {
      const [source = '', target = '', mode] = spec.split(':');
      return [volumeName(source), target, ...(mode ? [mode] : [])].join(':');
    });
    return this;
  }

  /** `127.0.0.1:<host>:<container>` of compose.yaml, published on 127.0.0.1 at a free host port. */
  withLoopbackPorts(ports: string[]): this {
    const exposed: Record<string, object> = {};
    const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
    for (const p of ports) {
      const containerPort = p.split(':').pop() as string;
      exposed[`${containerPort}/tcp`] = {};
      bindings[`${containerPort}/tcp`] = [{ HostIp: '127.0.0.1', HostPort: '' }];
    }
    this.createOpts.ExposedPorts = { ...this.createOpts.ExposedPorts, ...exposed };
    this.hostConfig.PortBindings = { ...this.hostConfig.PortBindings, ...bindings };
    return this;
  }
}

export interface ClientRun {
  exitCode: number;
  output: string;
}

/**
 * compose.yaml's services started one by one through testcontainers, each as compose would: its
 * image, command, user, environment, volumes (the run's own), restart policy and healthcheck, on a
 * network of the run's own where it is reached by its service name, in depends_on order
 * (`service_completed_successfully`: exit 0; `service_healthy`: its healthcheck passes).
 * Everything carries the label LABEL=<run id>; `down()` removes it all.
 */
export class World {
  readonly id = `cells-ct-${randomBytes(3).toString('hex')}`;
  readonly containers = new Map<string, StartedTestContainer>();
  private network: StartedNetwork | undefined;
  private readonly volumes: string[] = [];
  private readonly oneShots: StartedTestContainer[] = [];

  constructor(
    readonly engine: RunningEngine,
    readonly compose: ComposeFile,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  volumeName(name: string): string {
    return `${this.id}-${name}`;
  }

  /** Creates the network and volumes, then starts `services` (default: all but profiles and `client`). */
  async up(services?: string[]): Promise<void> {
    const names =
      services ??
      Object.entries(this.compose.services)
        .filter(([name, s]) => !s.profiles && name !== 'client')
        .map(([name]) => name);
    this.network = await new Network().start();
    for (const volume of Object.keys(this.compose.volumes ?? {})) {
      await this.engine.client.container.dockerode.createVolume({
        Name: this.volumeName(volume),
        Labels: { [LABEL]: this.id },
      });
      this.volumes.push(this.volumeName(volume));
    }
    for (const batch of startOrder(this.compose, names)) {
      const started = Date.now();
      await Promise.all(batch.map((name) => this.startService(name)));
      this.log(`started ${batch.join(', ')} in ${Date.now() - started} ms`);
    }
  }

  private container(name: string, spec: ComposeService, command?: string[]): ServiceContainer {
    if (!this.network) throw new Error('world is not up');
    const c = new ServiceContainer(spec.image ?? 'gitlab-cells-ssh:dev')
      .withName(`${this.id}-${name}${command ? `-${randomBytes(2).toString('hex')}` : ''}`)
      .withLabels({ [LABEL]: this.id, 'org.gitlab-cells-ssh.service': name })
      .withOnlyNetwork(this.network.getName(), name)
      .withVolumes(spec.volumes ?? [], (v) =>
        this.compose.volumes && v in this.compose.volumes ? this.volumeName(v) : v,
      )
      .withLoopbackPorts(spec.ports ?? [])
      .withRestartPolicy(command ? undefined : spec.restart);
    if (command ?? spec.command) c.withCommand(command ?? (spec.command as string[]));
    if (spec.entrypoint) c.withEntrypoint(spec.entrypoint);
    if (spec.user) c.withUser(spec.user);
    if (spec.environment) {
      c.withEnvironment(
        Object.fromEntries(Object.entries(spec.environment).map(([k, v]) => [k, String(v ?? '')])),
      );
    }
    const hc = spec.healthcheck;
    if (hc?.disable) c.withoutHealthCheck();
    else if (hc?.test) {
      c.withHealthCheck({
        test: hc.test as ['CMD', ...string[]],
        interval: durationMs(hc.interval, 5_000),
        timeout: durationMs(hc.timeout, 3_000),
        retries: hc.retries ?? 3,
        startPeriod: durationMs(hc.start_period, 0),
      });
    }
    return c;
  }

  private async startService(name: string): Promise<void> {
    const spec = this.compose.services[name];
    if (!spec) throw new Error(`compose.yaml has no service ${name}`);
    const oneShot = Object.values(this.compose.services).some(
      (s) => s.depends_on?.[name]?.condition === 'service_completed_successfully',
    );
    const c = this.container(name, spec);
    if (oneShot) {
      const started = await c.withWaitStrategy(new HealthyWait(this.engine, undefined)).start();
      this.oneShots.push(started);
      const r = await this.waitExit(started, 120_000);
      if (r.exitCode !== 0) throw new Error(`${name} exited with ${r.exitCode}:\n${r.output}`);
      return;
    }
    const health = spec.healthcheck?.test && !spec.healthcheck.disable;
    const started = await c
      .withWaitStrategy(new HealthyWait(this.engine, health ? name : undefined))
      .withStartupTimeout(120_000)
      .start();
    this.containers.set(name, started);
  }

  get(name: string): StartedTestContainer {
    const c = this.containers.get(name);
    if (!c) throw new Error(`service ${name} is not running in this world`);
    return c;
  }

  dockerode(name: string): Container {
    return this.engine.client.container.getById(this.get(name).getId());
  }

  async inspect(name: string) {
    return this.dockerode(name).inspect();
  }

  /** The host port (on 127.0.0.1) that a service's `containerPort` is published on. */
  async hostPort(name: string, containerPort: number): Promise<{ ip: string; port: number }> {
    const ports = (await this.inspect(name)).NetworkSettings.Ports as Record<
      string,
      Array<{ HostIp: string; HostPort: string }> | null
    >;
    const binding = ports[`${containerPort}/tcp`]?.[0];
    if (!binding) throw new Error(`${name}: port ${containerPort} is not published`);
    return { ip: binding.HostIp, port: Number(binding.HostPort) };
  }

  async waitHealthy(name: string, timeoutMs = 120_000): Promise<void> {
    await waitHealthy(this.engine, this.dockerode(name), name, timeoutMs);
  }

  /** Waits until a one-shot container exits; its exit code and output. */
  async waitExit(container: StartedTestContainer, timeoutMs: number): Promise<ClientRun> {
    const dc = this.engine.client.container.getById(container.getId());
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const state = (await dc.inspect()).State;
      if (!state.Running && !state.Restarting && state.Status !== 'created') {
        const raw = (await dc.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
        return { exitCode: state.ExitCode, output: demux(Buffer.from(raw)) };
      }
      await delay(250);
    }
    throw new Error(`${container.getName()} still running after ${timeoutMs} ms`);
  }

  /** Starts the compose `client` service with `args` for its scenario script; does not wait. */
  async startClient(args: string[], env: Record<string, string> = {}): Promise<StartedTestContainer> {
    const spec = this.compose.services.client;
    if (!spec) throw new Error('compose.yaml has no client service');
    const script = spec.volumes?.find((v) => v.includes('client-scenario.sh'));
    if (!script) throw new Error('compose.yaml: the client does not mount client-scenario.sh');
    const [hostPath = '', target = ''] = script.split(':');
    const volumes = (spec.volumes ?? []).filter((v) => v !== script);
    const [program = 'sh', scriptPath = target] = spec.command ?? [];
    const c = this.container('client', { ...spec, volumes }, [program, scriptPath, ...args])
      .withEnvironment({ ...(spec.environment ?? {}), ...env })
      .withCopyFilesToContainer([{ source: join(projectRoot(), hostPath), target, mode: 0o755 }])
      .withWaitStrategy(new HealthyWait(this.engine, undefined));
    const started = await c.start();
    this.oneShots.push(started);
    return started;
  }

  /** Runs the client scenario with `args` to its end. */
  async runClient(args: string[], env: Record<string, string> = {}, timeoutMs = 300_000): Promise<ClientRun> {
    return this.waitExit(await this.startClient(args, env), timeoutMs);
  }

  /** The container's output as it comes (stdout and stderr, demultiplexed). */
  async follow(container: StartedTestContainer): Promise<Readable> {
    return container.logs();
  }

  /** Runs `cmd` inside a service's container (as its user). */
  async exec(name: string, cmd: string[]): Promise<{ exitCode: number; output: string }> {
    const r = await this.get(name).exec(cmd);
    return { exitCode: r.exitCode, output: r.output };
  }

  /** Removes every container, volume and the network of this run. */
  async down(): Promise<void> {
    const errors: string[] = [];
    const all = [...this.containers.values(), ...this.oneShots];
    await Promise.all(
      all.map((c) =>
        c.stop({ remove: true, removeVolumes: true, timeout: 2_000 }).catch((err: Error) => {
          // already gone (e.g. removed by an earlier stop) is fine
          if (!/no such container|not found/i.test(err.message))
            errors.push(`${c.getName()}: ${err.message}`);
        }),
      ),
    );
    this.containers.clear();
    this.oneShots.length = 0;
    // containers of this run that the suite lost track of (a failed start) go too
    const dockerode = this.engine.client.container.dockerode;
    const leftovers = await dockerode.listContainers({
      all: true,
      filters: { label: [`${LABEL}=${this.id}`] },
    });
    for (const info of leftovers) {
      await dockerode
        .getContainer(info.Id)
        .remove({ force: true, v: true })
        .catch((err: Error) => {
          // removed meanwhile by the engine (the stop above was still under way)
          if (!/no such container|not found/i.test(err.message))
            errors.push(`${info.Names.join(',')}: ${err.message}`);
        });
    }
    for (const volume of this.volumes.splice(0)) {
      await dockerode
        .getVolume(volume)
        .remove()
        .catch((err: Error) => errors.push(`volume ${volume}: ${err.message}`));
    }
    if (this.network) {
      await this.network.stop().catch((err: Error) => errors.push(`network: ${err.message}`));
      this.network = undefined;
    }
    if (errors.length > 0) throw new Error(`cleanup of ${this.id} left:\n${errors.join('\n')}`);
  }
}

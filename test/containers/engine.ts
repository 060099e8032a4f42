import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { type ContainerRuntimeClient, getContainerRuntimeClient } from 'testcontainers';

/** The container engine the suite talks to, or why there is none. */
export type Engine =
  | {
      ok: true;
      client: ContainerRuntimeClient;
      /** The engine's unix socket (DOCKER_HOST), for calls testcontainers does not make. */
      socketPath: string | undefined;
      /** Podman: its libpod API runs healthchecks on request (it schedules them only through systemd). */
      podman: boolean;
      version: string;
    }
  | { ok: false; reason: string };

export const HOW_TO_START = [
  'start one as .ci/run does (README "Containers"):',
  'podman --runtime runc --cgroup-manager=cgroupfs system service --time=0 unix:///tmp/podman.sock &',
  'export DOCKER_HOST=unix:///tmp/podman.sock',
].join(' ');

/** The unix socket of DOCKER_HOST (or Docker's default one), if it is a socket. */
export function engineSocket(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return host.slice('unix://'.length);
  if (!host && existsSync('/var/run/docker.sock')) return '/var/run/docker.sock';
  return undefined;
}

/** GET `path` on the engine's socket; the status code and body, or an error. */
export function engineGet(
  socketPath: string,
  path: string,
  timeoutMs = 10_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET', timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${socketPath} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Finds the engine through testcontainers (DOCKER_HOST, else Docker's default socket). Never throws:
 * when no engine answers, `reason` says why and how to start one.
 */
export async function detectEngine(env: NodeJS.ProcessEnv = process.env): Promise<Engine> {
  if (!env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) {
    return {
      ok: false,
      reason: `no container engine: DOCKER_HOST is unset and /var/run/docker.sock does not exist; ${HOW_TO_START}`,
    };
  }
  const socketPath = engineSocket(env);
  if (socketPath) {
    const ping = await engineGet(socketPath, '/_ping', 5_000).catch((err: Error) => err);
    if (ping instanceof Error || ping.status !== 200) {
      const why = ping instanceof Error ? ping.message : `HTTP ${ping.status}`;
      return {
        ok: false,
        reason: `the container engine at ${socketPath} does not answer /_ping (${why}); ${HOW_TO_START}`,
      };
    }
  }
  try {
    const client = await getContainerRuntimeClient();
    const libpod = socketPath
      ? await engineGet(socketPath, '/v4.0.0/libpod/_ping', 5_000).catch(() => undefined)
      : undefined;
    return {
      ok: true,
      client,
      socketPath,
      podman: libpod?.status === 200,
      version: client.info.containerRuntime.serverVersion?.toString() ?? 'unknown',
    };
  } catch (err) {
    return {
      ok: false,
      reason: `testcontainers cannot use the engine: ${(err as Error).message}; ${HOW_TO_START}`,
    };
  }
}

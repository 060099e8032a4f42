import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jwtKey, SHELL_HEADER, signShellJwt, signWorkhorseJwt, WORKHORSE_HEADER } from '../../lib/jwt.js';
import { readSecretFile } from '../../lib/secrets.js';
import type { RunningStack } from './stack.js';

/** The JSON lines of a stack service's log (`<data>/logs/<name>.log`). */
export function serviceLog(stack: RunningStack, name: string): Record<string, unknown>[] {
  const text = readFileSync(join(stack.dataDir, 'logs', `${name}.log`), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The cells the topology router tunnelled `project` to, in order. */
export function tunnelledCells(stack: RunningStack, project: string): string[] {
  return serviceLog(stack, 'router-topology')
    .filter((l) => l.msg === 'access granted, tunnelling' && l.gl_project_path === project)
    .map((l) => String(l.cell));
}

/** The Topology Service's `call` lines of `method` (`Classify`, `POST /v1/classify`). */
export function topologyCalls(stack: RunningStack, method: string): Record<string, unknown>[] {
  return serviceLog(stack, 'topology-service').filter((l) => l.msg === 'call' && l.method === method);
}

export async function shellJwt(stack: RunningStack, glId?: string): Promise<string> {
  return signShellJwt(jwtKey(readSecretFile(stack.json.secrets.shell, 'shell secret')), glId);
}

export async function workhorseJwt(stack: RunningStack): Promise<string> {
  return signWorkhorseJwt(jwtKey(readSecretFile(stack.json.secrets.workhorse, 'workhorse secret')));
}

export { type Answer, HttpClient } from './http-client.js';
export { SHELL_HEADER, WORKHORSE_HEADER };

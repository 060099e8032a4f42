/**
 * @file Test helpers for the Topology Service: temp folders, a started service on real ports with
 * its log lines captured, a test CA made with openssl, and the demo cells.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { pino } from 'pino';
import type { JournalDraft } from '../../lib/contracts/world.js';
import { REDACT_PATHS } from '../../lib/logger.js';
import { type ClientTls, type TopologyClients, topologyClients } from '../client.js';
import { loadTopologyConfig } from '../config.js';
import { buildTopologyService, type ListeningFields, type TopologyService } from '../server.js';

const cleanups: Array<() => void | Promise<void>> = [];

export function onCleanup(fn: () => void | Promise<void>): void {
  cleanups.push(fn);
}

/** Runs every registered cleanup, latest first; call from afterEach/afterAll. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()?.();
}

export function tempDir(prefix = 'topology-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeSecret(dir: string, name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** Three cells as the stack has them: the legacy cell 1 and two more. */
export const TEST_CELLS = [
  { id: 1, name: 'cell-1', address: 'cell-1.example', sessionPrefix: 'cell-1' },
  { id: 2, name: 'cell-2', address: 'cell-2.example', sessionPrefix: 'cell-2' },
  { id: 3, name: 'cell-3', address: '127.0.0.3:4443', sessionPrefix: 'cell-3' },
];

/** Log lines as JSON objects, from a pino logger writing here. */
export class LogSink extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
  calls(method?: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.msg === 'call' && (method === undefined || l.method === method));
  }
}

export interface StartedTopology {
  service: TopologyService;
  listening: ListeningFields;
  /** `host:port` of gRPC. */
  grpc: string;
  /** `http(s)://host:port` of REST. */
  http: string;
  log: LogSink;
  /** The journal entries the service wrote (what it would send over a world channel). */
  journal: JournalDraft[];
  /** Clients on one channel (closed at cleanup). */
  clients(tls?: ClientTls): TopologyClients;
  stop(): Promise<void>;
}

/** Starts the service in this process on 127.0.0.1 ports chosen by the system. */
export async function startTopology(file: Record<string, unknown> = {}): Promise<StartedTopology> {
  const config = loadTopologyConfig(
    { grpcListen: '127.0.0.1:0', httpListen: '127.0.0.1:0', cells: TEST_CELLS, ...file },
    {},
  );
  const log = new LogSink();
  const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, log);
  const journal: JournalDraft[] = [];
  const service = buildTopologyService(config, logger, (entry) => journal.push(entry));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.close(500);
  };
  onCleanup(stop);
  const listening = await service.listen();
  return {
    service,
    listening,
    grpc: listening.grpc,
    http: `${config.tls ? 'https' : 'http'}://${listening.http}`,
    log,
    journal,
    clients(tls) {
      const clients = topologyClients(listening.grpc, tls);
      onCleanup(() => clients.close());
      return clients;
    },
    stop,
  };
}

const run = promisify(execFile);

/** Fails the suite with a clear message when openssl is not installed. */
export async function requireOpenssl(): Promise<void> {
  try {
    await run('openssl', ['version']);
  } catch (err) {
    throw new Error(
      `these tests make a test CA with openssl, which is not available: ${(err as Error).message}`,
    );
  }
}

export interface TestPki {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** A client certificate from another CA: mTLS must refuse it. */
  strangerCertFile: string;
  strangerKeyFile: string;
}

async function ca(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await run(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1']
      .concat(['-keyout', key, '-out', cert, '-subj', `/CN=${name}`])
      .concat(['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']),
  );
  return { cert, key };
}

async function leaf(dir: string, name: string, signer: { cert: string; key: string }, ext: string) {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, `${ext}\n`);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/CN=${name}`,
  ]);
  await run(
    'openssl',
    ['x509', '-req', '-in', csr, '-CA', signer.cert, '-CAkey', signer.key].concat([
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      cert,
      '-extfile',
      extFile,
    ]),
  );
  return { cert, key };
}

/** A CA, a server certificate for 127.0.0.1/localhost, a client certificate, and a stranger's. */
export async function makeTestPki(): Promise<TestPki> {
  await requireOpenssl();
  const dir = tempDir('topology-pki-');
  const root = await ca(dir, 'test-ca');
  const other = await ca(dir, 'other-ca');
  const server = await leaf(
    dir,
    'server',
    root,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth',
  );
  const client = await leaf(dir, 'cell-2', root, 'extendedKeyUsage=clientAuth');
  const stranger = await leaf(dir, 'stranger', other, 'extendedKeyUsage=clientAuth');
  return {
    dir,
    caFile: root.cert,
    serverCertFile: server.cert,
    serverKeyFile: server.key,
    clientCertFile: client.cert,
    clientKeyFile: client.key,
    strangerCertFile: stranger.cert,
    strangerKeyFile: stranger.key,
  };
}

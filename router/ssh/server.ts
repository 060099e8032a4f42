import { randomUUID } from 'node:crypto';
import net, { type AddressInfo, type Socket } from 'node:net';
import ssh2, { type Connection, type KexAlgorithm } from 'ssh2';
import type { Logger } from '../../lib/logger.js';
import type { Listen } from '../config.js';
import { type AuthState, authenticate } from './auth.js';
import { handleSession, type RunningSession, type SessionDeps } from './session.js';

const { Server } = ssh2;

/**
 * The SSH front: an ssh2 server with the router's host key, curve25519 key exchange first,
 * keepalives, a login grace timer, public-key auth against the cells and one git command per
 * session. The router owns the TCP listener and hands sockets to ssh2 (`injectSocket`), so the
 * login grace timer runs from the TCP accept (ssh2 only reports a connection once the client sent
 * its version line) and shutdown can destroy sockets that outstay it. `close()` stops accepting,
 * lets running commands finish within the grace period, then cancels what is left and disconnects.
 */
export interface SshFrontOptions {
  /** One private key per type; the client's preferred type among them is used. */
  hostKeys: Buffer[];
  loginGraceMs: number;
  keepaliveIntervalMs: number;
}

/** Preferred key exchange: curve25519 first, then the NIST curves; no finite-field DH. */
const KEX: KexAlgorithm[] = [
  'curve25519-sha256',
  'curve25519-sha256@libssh.org',
  'ecdh-sha2-nistp256',
  'ecdh-sha2-nistp384',
  'ecdh-sha2-nistp521',
];

/** After the sessions: how long clients may take to leave by themselves, then to honour a disconnect. */
const LINGER_MS = 1000;
const DISCONNECT_WAIT_MS = 2000;

interface RawConnection {
  socket: Socket;
  /** Login grace timer; cleared once the client authenticated. */
  grace: NodeJS.Timeout;
}

interface ConnectionEntry {
  client: Connection;
  sessions: Set<RunningSession>;
  closed: Promise<void>;
}

export class SshFront {
  private readonly server: InstanceType<typeof Server>;
  private readonly listener: net.Server;
  /** Accepted sockets by `ip:port`, from accept to close. */
  private readonly sockets = new Map<string, RawConnection>();
  private readonly connections = new Set<ConnectionEntry>();
  private nextConnId = 1;
  private closing = false;

  constructor(
    private readonly opts: SshFrontOptions,
    private readonly deps: SessionDeps,
    private readonly log: Logger,
  ) {
    this.server = new Server(
      {
        hostKeys: opts.hostKeys,
        algorithms: { kex: KEX },
        ident: 'GitLab-Cells-Router',
        keepaliveInterval: opts.keepaliveIntervalMs,
        keepaliveCountMax: 3,
      },
      (client, info) => this.onConnection(client, info.ip, info.port),
    );
    this.server.on('error', (err: Error) => this.log.debug({ err }, 'ssh connection error'));
    this.listener = net.createServer((socket) => this.onSocket(socket));
  }

  listen(listen: Listen): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.listener.once('error', reject);
      this.listener.listen(listen.port, listen.host, () => {
        this.listener.off('error', reject);
        resolve(this.listener.address() as AddressInfo);
      });
    });
  }

  /** Commands running right now, over all connections. */
  get activeSessions(): number {
    let n = 0;
    for (const c of this.connections) n += c.sessions.size;
    return n;
  }

  private onSocket(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    const key = `${socket.remoteAddress}:${socket.remotePort}`;
    const grace = setTimeout(() => {
      this.log.info(
        { remote_ip: socket.remoteAddress, login_grace_ms: this.opts.loginGraceMs },
        'login grace time exceeded, disconnecting',
      );
      socket.destroy();
    }, this.opts.loginGraceMs);
    this.sockets.set(key, { socket, grace });
    socket.once('close', () => {
      clearTimeout(grace);
      this.sockets.delete(key);
    });
    this.server.injectSocket(socket);
  }

  private onConnection(client: Connection, ip: string, port: number): void {
    const raw = this.sockets.get(`${ip}:${port}`);
    if (this.closing || !raw) {
      client.end();
      return;
    }
    const connId = this.nextConnId++;
    const log = this.log.child({ conn_id: connId, remote_ip: ip, remote_port: port });
    let markClosed = () => {};
    const closed = new Promise<void>((resolve) => {
      markClosed = resolve;
    });
    const entry: ConnectionEntry = { client, sessions: new Set(), closed };
    this.connections.add(entry);
    this.deps.metrics.sshConnections++;
    const state: AuthState = {
      log,
      remoteIp: ip,
      requestId: randomUUID(),
      keyId: undefined,
      username: undefined,
      lookups: new Map(),
    };
    let connLog = log;

    client.on('authentication', (ctx) => authenticate(ctx, state, this.deps.api, this.deps.metrics));
    client.on('ready', () => {
      clearTimeout(raw.grace);
      connLog = log.child({ key_id: state.keyId, user: state.username });
      connLog.info('authenticated');
    });
    client.on('session', (accept, reject) => {
      const keyId = state.keyId;
      if (this.closing || keyId === undefined) {
        reject();
        return;
      }
      handleSession(
        accept(),
        {
          keyId,
          remoteIp: ip,
          log: connLog,
          transport: raw.socket,
          track: (s) => {
            entry.sessions.add(s);
            return () => entry.sessions.delete(s);
          },
        },
        this.deps,
      );
    });
    client.on('error', (err: Error) => connLog.debug({ err }, 'connection error'));
    client.on('close', () => {
      markClosed();
      this.connections.delete(entry);
      for (const s of entry.sessions) s.cancel('connection closed');
      connLog.info('connection closed');
    });
  }

  /** Graceful shutdown; resolves when every connection is gone. */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    const stopped = new Promise<void>((resolve) => this.listener.close(() => resolve()));
    for (const c of this.connections) if (c.sessions.size === 0) c.client.end();
    const running = [...this.connections].flatMap((c) => [...c.sessions].map((s) => s.done));
    const result = await Promise.race([
      Promise.all(running).then(() => 'drained' as const),
      delay(graceMs, 'timeout'),
    ]);
    if (result === 'timeout') {
      this.log.warn({ sessions: this.activeSessions }, 'shutdown grace period over, cancelling sessions');
      for (const c of this.connections) for (const s of c.sessions) s.cancel('shutdown');
    }
    // Clients that got their exit status close the channel and leave by themselves; disconnecting
    // them first would lose the status. Whoever is still there after a moment is disconnected.
    await Promise.race([Promise.all([...this.connections].map((c) => c.closed)), delay(LINGER_MS, 'linger')]);
    for (const c of this.connections) c.client.end();
    await Promise.race([stopped, delay(DISCONNECT_WAIT_MS, 'timeout')]);
    for (const raw of this.sockets.values()) raw.socket.destroy();
    await stopped;
  }
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}

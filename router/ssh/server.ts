import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import ssh2, { type Connection, type Session } from 'ssh2';
import type { Logger } from '../../lib/logger.js';
import { actorLog } from '../cells/actor.js';
import type { Listen } from '../config.js';
import { coalesceWrites, SSH_ALGORITHMS, tuneSsh2PacketPath } from './algorithms.js';
import { type AuthState, authenticate } from './auth.js';
import type { TrustedCas } from './cert-auth.js';
import { type AcceptedSocket, type ListenerOptions, SshListener } from './listener.js';
import { handleSession, type RunningSession, type SessionDeps } from './session.js';

const { Server } = ssh2;

/**
 * The SSH front: an ssh2 server with the router's host keys, the algorithms of `algorithms.ts`,
 * keepalives, public-key auth against the cells and one command per session, at most
 * `maxSessions` sessions at once per connection (gitlab-sshd `concurrent_sessions_limit`: the next
 * channel is refused with `resource shortage: too many concurrent sessions`). The TCP side (startups
 * cap, login grace, PROXY protocol) is `listener.ts`, which hands sockets to ssh2 (`injectSocket`).
 * `close()` stops accepting, lets running commands finish within the grace period, then cancels
 * what is left and disconnects.
 */
export interface SshFrontOptions extends ListenerOptions {
  /** One private key per type; the client's preferred type among them is used. */
  hostKeys: Buffer[];
  keepaliveIntervalMs: number;
  /** Missed keepalive answers before the connection is dropped (OpenSSH `ClientAliveCountMax`). */
  keepaliveCountMax: number;
  maxSessions: number;
  /** `trustedUserCaKeys`: CA public key blobs (base64) whose user certificates log in. */
  trustedCas: TrustedCas;
}

/** After the sessions: how long clients may take to leave by themselves, then to honour a disconnect. */
const LINGER_MS = 1000;
const DISCONNECT_WAIT_MS = 2000;
/** SSH_OPEN_RESOURCE_SHORTAGE (RFC 4254 §5.1), gitlab-sshd's answer to one session too many. */
const RESOURCE_SHORTAGE = 4;
export const TOO_MANY_SESSIONS = 'too many concurrent sessions';

interface ConnectionEntry {
  client: Connection;
  raw: AcceptedSocket;
  state: AuthState;
  /** The connection's logger; after authentication it names the user. */
  log: Logger;
  sessions: Set<RunningSession>;
  /** stdout bytes of its sessions (gitlab-sshd `written_bytes`). */
  writtenBytes: number;
  started: number;
  /** Session channels accepted and not yet closed (the concurrent sessions limit). */
  openChannels: number;
  closed: Promise<void>;
}

export class SshFront {
  private readonly server: InstanceType<typeof Server>;
  private readonly listener: SshListener;
  private readonly connections = new Set<ConnectionEntry>();
  private nextConnId = 1;
  private closing = false;

  constructor(
    private readonly opts: SshFrontOptions,
    private readonly deps: SessionDeps,
    private readonly log: Logger,
  ) {
    tuneSsh2PacketPath();
    this.server = new Server(
      {
        hostKeys: opts.hostKeys,
        algorithms: SSH_ALGORITHMS,
        ident: 'GitLab-Cells-Router',
        keepaliveInterval: opts.keepaliveIntervalMs,
        keepaliveCountMax: opts.keepaliveCountMax,
      },
      (client, info) => this.onConnection(client, info.ip, info.port),
    );
    this.server.on('error', (err: Error) => this.log.debug({ err }, 'ssh connection error'));
    this.listener = new SshListener(opts, deps.metrics, log, (a) => {
      coalesceWrites(a.socket);
      this.server.injectSocket(a.socket);
    });
  }

  listen(listen: Listen): Promise<AddressInfo> {
    return this.listener.listen(listen);
  }

  /** Commands running right now, over all connections. */
  get activeSessions(): number {
    let n = 0;
    for (const c of this.connections) n += c.sessions.size;
    return n;
  }

  private onConnection(client: Connection, ip: string, port: number): void {
    const raw = this.listener.sockets.get(`${ip}:${port}`);
    if (this.closing || !raw) {
      client.end();
      return;
    }
    const entry = this.newEntry(client, raw);
    this.connections.add(entry);
    this.deps.metrics.sshConnections++;
    const { state, log } = entry;

    client.on('authentication', (ctx) =>
      authenticate(ctx, state, this.deps.api, this.deps.metrics, this.opts.trustedCas),
    );
    client.on('ready', () => {
      raw.authenticated();
      entry.log = log.child({ ...(state.actor ? actorLog(state.actor) : {}), user: state.username });
      entry.log.info('authenticated');
    });
    client.on('session', (accept, reject) => this.onSession(entry, accept, reject));
    client.on('error', (err: Error & { level?: string }) => {
      if (err.level !== 'client-timeout') return entry.log.debug({ err }, 'connection error');
      // keepaliveCountMax keepalives unanswered: the client is gone, whether or not it reads our FIN.
      entry.log.info(
        { keepalive_count_max: this.opts.keepaliveCountMax },
        'keepalive timeout, disconnecting',
      );
      raw.socket.destroy();
    });
    client.on('close', () => {
      entry.markClosed();
      this.connections.delete(entry);
      for (const s of entry.sessions) s.cancel('connection closed');
      this.finished(entry);
    });
  }

  /** A connection's bookkeeping: its log (the client's address), auth state, sessions and end. */
  private newEntry(
    client: Connection,
    raw: ConnectionEntry['raw'],
  ): ConnectionEntry & { markClosed(): void } {
    const log = this.log.child({
      conn_id: this.nextConnId++,
      remote_ip: raw.clientIp,
      remote_port: raw.clientPort,
      ...(raw.proxyIp ? { proxy_ip: raw.proxyIp } : {}),
    });
    let markClosed = () => {};
    const closed = new Promise<void>((resolve) => {
      markClosed = resolve;
    });
    const state: AuthState = {
      log,
      remoteIp: raw.clientIp,
      requestId: randomUUID(),
      actor: undefined,
      username: undefined,
      authAttempted: false,
      serverError: false,
      lookups: new Map(),
    };
    return {
      client,
      raw,
      state,
      log,
      sessions: new Set(),
      openChannels: 0,
      writtenBytes: 0,
      started: Date.now(),
      closed,
      markClosed,
    };
  }

  private onSession(entry: ConnectionEntry, accept: () => Session, reject: () => void): void {
    const actor = entry.state.actor;
    if (this.closing || actor === undefined) {
      reject();
      return;
    }
    if (entry.openChannels >= this.opts.maxSessions) {
      this.deps.metrics.sshConcurrentLimitedSessions++;
      entry.log.info({ max_sessions: this.opts.maxSessions }, TOO_MANY_SESSIONS);
      rejectResourceShortage(entry.client, reject);
      return;
    }
    const session = accept();
    entry.openChannels++;
    session.once('close', () => entry.openChannels--);
    handleSession(
      session,
      {
        actor,
        remoteIp: entry.raw.clientIp,
        log: entry.log,
        transport: entry.raw.socket,
        track: (s) => {
          entry.sessions.add(s);
          return () => entry.sessions.delete(s);
        },
        ended: (outcome, writtenBytes) => {
          entry.writtenBytes += writtenBytes;
          if (outcome === 'system') entry.state.serverError = true;
        },
      },
      this.deps,
    );
  }

  /** gitlab-sshd's connection SLI and its `access: finish` line, once per connection. */
  private finished(entry: ConnectionEntry): void {
    const m = this.deps.metrics;
    if (entry.state.authAttempted) {
      m.sliSshdConnections++;
      if (entry.state.serverError) m.sliSshdConnectionErrors++;
    }
    entry.log.info(
      { duration_s: (Date.now() - entry.started) / 1000, written_bytes: entry.writtenBytes },
      'access: finish',
    );
  }

  /** Graceful shutdown; resolves when every connection is gone. */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    const stopped = this.listener.close();
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
    this.listener.destroyAll();
    await stopped;
  }
}

/**
 * ssh2's `reject()` answers a session open with CONNECT_FAILED and no text; gitlab-sshd answers
 * RESOURCE_SHORTAGE "too many concurrent sessions". `reject()` sends through the connection's
 * protocol object synchronously, so its reason and text are replaced for that one call (ssh2 is
 * pinned; without the internal, the plain rejection is sent).
 */
interface ProtocolInternals {
  _protocol?: { channelOpenFail?: (sender: number, reason: number, desc: string) => void };
}

function rejectResourceShortage(client: Connection, reject: () => void): void {
  const proto = (client as unknown as ProtocolInternals)._protocol;
  const original = proto?.channelOpenFail;
  if (!proto || typeof original !== 'function') {
    reject();
    return;
  }
  proto.channelOpenFail = (sender) => original.call(proto, sender, RESOURCE_SHORTAGE, TOO_MANY_SESSIONS);
  try {
    reject();
  } finally {
    proto.channelOpenFail = original;
  }
}

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}

import type { Duplex } from 'node:stream';
import type * as grpc from '@grpc/grpc-js';
import { BackchannelCredentials, parseGitalyAddress, SidechannelRegistry } from '../../lib/gitaly/index.js';
import { loadSshService } from '../../lib/proto.js';
import { encodeStdin, SIDECHANNEL_ID_METADATA, SidebandReader, STDIN_FLUSH } from '../../lib/sidechannel.js';
import { StdoutWatch } from './stdout-watch.js';

/**
 * Test client for mock Gitaly's backchannel, built on the bridge's client library (`lib/gitaly`):
 * an `SSHService` client whose channel runs over a yamux backchannel, plus raw sidechannel calls
 * where the test writes stdin itself (pkt framing, flush, half-close, cancel) and gets the unary
 * answer, the sideband output and the status.
 */
export interface BackchannelClient {
  client: grpc.Client;
  registry: SidechannelRegistry;
  /** Streams the client refused (unknown id…), as lib/gitaly reports them. */
  refused: string[];
  close(): void;
}

export function connectBackchannel(address: string, opts: { ca?: Buffer } = {}): BackchannelClient {
  const target = parseGitalyAddress(address);
  const registry = new SidechannelRegistry();
  const refused: string[] = [];
  const credentials = new BackchannelCredentials({
    target,
    registry,
    yamuxWindow: 256 * 1024,
    ...(opts.ca ? { ca: opts.ca } : {}),
    onRefusedStream: (reason) => refused.push(reason),
  });
  const Client = loadSshService();
  const client = new Client(target.target, credentials);
  return { client, registry, refused, close: () => client.close() };
}

export interface SidechannelOutcome {
  error: grpc.ServiceError | null;
  response: { packfile_negotiation_statistics?: Record<string, unknown> } | undefined;
  stdout: Buffer;
  stderr: string;
  /** Whether Gitaly opened the sidechannel at all. */
  opened: boolean;
}

/** One `SSHUploadPackWithSidechannel` with a hand-driven sidechannel. */
export class SidechannelCall {
  readonly call: grpc.ClientUnaryCall;
  readonly done: Promise<SidechannelOutcome>;
  /** Resolves with the sidechannel once Gitaly opened it and `ok` was written. */
  readonly stream: Promise<Duplex>;
  private readonly out: { stdout: Buffer[]; stderr: Buffer[] } = { stdout: [], stderr: [] };
  private readonly watch = new StdoutWatch(() => this.stdout);

  constructor(bc: BackchannelClient, request: Record<string, unknown>, metadata: grpc.Metadata) {
    const waiter = bc.registry.register();
    if (metadata.get(SIDECHANNEL_ID_METADATA).length === 0)
      metadata.add(SIDECHANNEL_ID_METADATA, `${waiter.id}`);
    this.stream = waiter.stream;
    const reader = new SidebandReader((band, data) => {
      this.out[band === 1 ? 'stdout' : 'stderr'].push(data);
      this.watch.wake();
    });
    let streamEnded: Promise<void> = Promise.resolve();
    void waiter.stream.then((s) => {
      s.on('error', () => {});
      streamEnded = new Promise((resolve) => {
        s.on('data', (chunk: Buffer) => reader.push(chunk));
        s.once('end', resolve);
        s.once('close', resolve);
      });
    });
    const client = bc.client as unknown as Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>;
    let settle!: (outcome: SidechannelOutcome) => void;
    this.done = new Promise((resolve) => {
      settle = resolve;
    });
    this.call = client.SSHUploadPackWithSidechannel!.call(
      bc.client,
      request,
      metadata,
      (error: grpc.ServiceError | null, response: SidechannelOutcome['response']) => {
        waiter.close();
        void streamEnded.then(() =>
          settle({
            error,
            response,
            stdout: Buffer.concat(this.out.stdout),
            stderr: Buffer.concat(this.out.stderr).toString('utf8'),
            opened: waiter.arrived,
          }),
        );
      },
    );
  }

  get stdout(): Buffer {
    return Buffer.concat(this.out.stdout);
  }

  /** Writes git stdin, pkt-framed as a Gitaly client does. */
  async write(data: string | Buffer): Promise<void> {
    (await this.stream).write(Buffer.concat(encodeStdin(Buffer.from(data))));
  }

  /** Raw bytes on the sidechannel (to break the framing on purpose). */
  async writeRaw(data: string | Buffer): Promise<void> {
    (await this.stream).write(Buffer.from(data));
  }

  /** Gitaly's `CloseWrite`: the flush that ends git's stdin. */
  async closeWrite(): Promise<void> {
    (await this.stream).write(STDIN_FLUSH);
  }

  /** Resolves when the stdout received so far satisfies `predicate`. */
  waitForStdout(predicate: (stdout: Buffer) => boolean, timeoutMs = 10_000): Promise<Buffer> {
    return this.watch.waitFor(predicate, timeoutMs);
  }
}

/**
 * @file The tunnel of one SSH git command to its cell's bridge (gitlab-shell's `cells` client): one
 * streaming request, or receive-pack in two (advertisement, then the push), shaped by the release
 * profile; the response relayed to the client and turned into its exit status.
 */
import type { Logger } from '../../lib/logger.js';
import { FLUSH_PKT } from '../../lib/pktline.js';
import { CommandFailed, MisdirectedError, REMOTE_UNAVAILABLE_MESSAGE, RouterError } from '../errors.js';
import type { GitCommandContext, GitCommandDeps } from './git-command.js';
import { passthrough, pumpInput, readAtLeast } from './input.js';
import { type OpenTunnel, openTunnel, type TunnelEndpoint, type TunnelTarget } from './open.js';
import type { TunnelShape } from './profiles.js';
import { AdvertisementFilter, relayResponse, type TunnelOutcome, TunnelProtocolError } from './response.js';

export class Tunnel {
  constructor(
    private readonly deps: GitCommandDeps,
    private readonly ctx: GitCommandContext,
    private readonly target: TunnelTarget,
    private readonly shape: TunnelShape,
    private readonly log: Logger,
  ) {}

  private async open(endpoint: TunnelEndpoint, retryable: boolean, refusalPrefix = ''): Promise<OpenTunnel> {
    const jwt = await this.shape.shellJwt();
    const p = openTunnel(this.deps.cells, jwt, this.target, endpoint, refusalPrefix);
    if (retryable) return p;
    // stdin was already consumed: a 421 now cannot be replayed elsewhere.
    return p.catch((err: unknown) => {
      throw err instanceof MisdirectedError ? RouterError.tunnelUnavailable(err.message, err) : err;
    });
  }

  /**
   * upload-pack / upload-archive (and receive-pack before gitlab-shell!1561): one request, stdin
   * streamed in (upload-pack's body closed after negotiation when the profile says so), response relayed.
   */
  async streaming(endpoint: TunnelEndpoint, uploadPack: boolean): Promise<number> {
    const t = await this.open(endpoint, true);
    const pump = pumpInput(
      this.ctx.io.stdin,
      t.call.body,
      uploadPack ? this.shape.uploadPackInput() : passthrough,
    );
    try {
      const outcome = await this.relay(t);
      return this.exitStatus(outcome);
    } finally {
      pump.stop();
      this.close(t, pump.bodyEnded);
    }
  }

  /**
   * receive-pack in two requests (gitlab-shell!1561): (1) body `0000` → relay the ref
   * advertisement through its flush; (2) once the client starts sending, stream its stdin and relay
   * the response without the repeated advertisement.
   */
  async receivePack(): Promise<number> {
    // A cell's refusal of either request reads as gitlab-shell's (internal/command/githttp).
    const adv = await this.open('ssh-receive-pack', true, 'cells routing: receive-pack advertisement: ');
    adv.call.body.end(FLUSH_PKT);
    const keep = new AdvertisementFilter('advertisement');
    let first: TunnelOutcome;
    try {
      first = await this.relay(adv, keep);
    } finally {
      this.close(adv, true);
    }
    if (!keep.complete) {
      this.log.warn({ outcome: first }, 'receive-pack advertisement ended before its flush');
      if (first.framed && !first.error && first.exitStatus !== undefined && first.exitStatus !== 0) {
        return first.exitStatus;
      }
      throw this.broken(first, 'cells routing: receive-pack advertisement: advertisement ended before flush');
    }
    if (first.framed && (first.error || first.exitStatus !== 0)) return this.exitStatus(first);

    const input = await readAtLeast(this.ctx.io.stdin, FLUSH_PKT.length, this.ctx.signal);
    if (input.length === 0 || input.subarray(0, FLUSH_PKT.length).equals(FLUSH_PKT)) {
      this.log.info('client sent no commands, nothing to push');
      return 0;
    }
    const push = await this.open('ssh-receive-pack', false, 'cells routing: receive-pack response: ');
    const pump = pumpInput(this.ctx.io.stdin, push.call.body, passthrough, [input]);
    try {
      const outcome = await this.relay(push, new AdvertisementFilter('rest'));
      return this.exitStatus(outcome);
    } finally {
      pump.stop();
      this.close(push, pump.bodyEnded);
    }
  }

  private async relay(t: OpenTunnel, filter?: AdvertisementFilter): Promise<TunnelOutcome> {
    try {
      return await relayResponse(
        t.response.body,
        t.framed,
        { stdout: this.ctx.io.stdout, stderr: this.ctx.io.stderr, transport: this.ctx.transport },
        filter,
      );
    } catch (err) {
      t.call.cancel();
      if (this.ctx.signal.aborted) throw RouterError.cancelled('cancelled', err);
      if (err instanceof TunnelProtocolError)
        throw RouterError.tunnelProtocol(REMOTE_UNAVAILABLE_MESSAGE, err);
      throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
    }
  }

  /** The response is complete: end our half of the stream cleanly (or cancel it on failure). */
  private close(t: OpenTunnel, bodyEnded: boolean): void {
    t.release();
    if (this.ctx.signal.aborted) t.call.cancel();
    else if (!bodyEnded && !t.call.body.writableEnded) t.call.body.end();
  }

  /** The exit status of a complete response; a tunnel that failed throws for the session to render. */
  private exitStatus(outcome: TunnelOutcome): number {
    if (!outcome.framed) return 0;
    if (outcome.error) {
      const status = outcome.exitStatus !== undefined && outcome.exitStatus > 0 ? outcome.exitStatus : 1;
      const error = RouterError.tunnelUnavailable(outcome.error.message, outcome.error);
      throw new CommandFailed(error, status, outcome.wroteStderr);
    }
    if (outcome.exitStatus === undefined)
      throw this.broken(outcome, 'tunnel response ended without an exit status');
    return outcome.exitStatus >= 0 ? outcome.exitStatus : 1;
  }

  /** A response that broke off: "Remote repository is unavailable" unless the cell already said why. */
  private broken(outcome: TunnelOutcome, why: string): CommandFailed {
    const error = RouterError.tunnelProtocol(REMOTE_UNAVAILABLE_MESSAGE, new Error(why));
    return new CommandFailed(error, 1, outcome.wroteStderr);
  }
}

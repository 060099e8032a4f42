/**
 * @file Geo's forward to the primary (gitlab-shell `githttp.PullCommand` / `PushCommand` with
 * `geo_proxy_*_ssh_direct_to_primary`): one `POST <primary_repo>/ssh-upload-pack|ssh-receive-pack`
 * with the custom action's `request_headers` and `Git-Protocol` (sent even when empty), the
 * client's stdin as the body, and the response copied verbatim to the client's stdout. Like
 * gitlab-shell: a status ≥ 400 is an error whose text is the body (empty: "Remote repository is
 * unavailable"), so is a primary that cannot be reached; the exit status is 0 once the copy
 * finished (the tunnel carries none). Pull bodies end after `done` + flush (gitlab-shell!1537).
 */
import { readBodyLimited } from '../../lib/streams.js';
import { type CellTransport, createCellTransport, type UpstreamCall } from '../cells/transport.js';
import { REMOTE_UNAVAILABLE_MESSAGE, RouterError } from '../errors.js';
import type { GitService } from '../ssh/command.js';
import type { GitCommandContext } from '../tunnel/git-command.js';
import { passthrough, pumpInput, UploadPackFilter } from '../tunnel/input.js';
import { relayResponse } from '../tunnel/response.js';
import type { GeoCustomAction } from './custom-action.js';

const MAX_ERROR_BODY = 64 * 1024;

/** One HTTP client per primary origin, kept for the router's lifetime. */
export class PrimaryClients {
  private readonly byOrigin = new Map<string, CellTransport>();

  for(url: URL): CellTransport {
    let t = this.byOrigin.get(url.origin);
    if (!t) {
      // HTTP/2 to the primary as before; gitlab-shell speaks HTTP/1.1 there too (not switched yet).
      t = createCellTransport(url.origin, {}, 'h2c');
      this.byOrigin.set(url.origin, t);
    }
    return t;
  }

  async close(): Promise<void> {
    await Promise.all([...this.byOrigin.values()].map((t) => t.close()));
  }
}

type ForwardContext = Pick<GitCommandContext, 'io' | 'gitProtocol' | 'signal' | 'log' | 'transport'>;

function endpointOf(service: GitService, custom: GeoCustomAction): string {
  if (service === 'git-receive-pack' && custom.pushSshDirect) return 'ssh-receive-pack';
  if (service === 'git-upload-pack' && custom.fetchSshDirect) return 'ssh-upload-pack';
  // gitlab-shell would translate to the primary's smart HTTP here; the primaries we reach do not need it.
  throw RouterError.cellsRouting(
    `geo: the custom action for ${service} does not allow SSH-over-HTTP to the primary (${custom.action})`,
  );
}

async function open(clients: PrimaryClients, custom: GeoCustomAction, endpoint: string, ctx: ForwardContext) {
  const url = custom.primaryRepo;
  const path = `${url.pathname.replace(/\/+$/, '')}/${endpoint}${url.search}`;
  const headers = { ...custom.requestHeaders, 'git-protocol': ctx.gitProtocol ?? '' };
  if (ctx.signal.aborted) throw RouterError.cancelled('cancelled');
  let call: UpstreamCall;
  try {
    call = await clients.for(url).open({ method: 'POST', path, headers, streamBody: true });
  } catch (err) {
    throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
  }
  const cancel = () => call.cancel();
  ctx.signal.addEventListener('abort', cancel, { once: true });
  const release = () => ctx.signal.removeEventListener('abort', cancel);
  try {
    return { call, response: await call.response, release };
  } catch (err) {
    release();
    if (ctx.signal.aborted) throw RouterError.cancelled('cancelled', err);
    throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
  }
}

/** Runs the command against the primary; resolves with the SSH exit status. */
export async function forwardToPrimary(
  clients: PrimaryClients,
  ctx: ForwardContext,
  service: GitService,
  custom: GeoCustomAction,
): Promise<number> {
  const endpoint = endpointOf(service, custom);
  const log = ctx.log.child({ primary: custom.primaryRepo.origin, endpoint });
  log.info('geo: forwarding to the primary');
  const { call, response, release } = await open(clients, custom, endpoint, ctx);
  if (response.status >= 400) {
    const text = await readBodyLimited(response.body, MAX_ERROR_BODY)
      .then((r) => r.body.toString('utf8').trim())
      .catch(() => '');
    call.cancel();
    release();
    log.info({ status: response.status }, 'geo: the primary refused');
    throw RouterError.tunnelUnavailable(text || REMOTE_UNAVAILABLE_MESSAGE);
  }
  const filter = service === 'git-upload-pack' ? new UploadPackFilter() : passthrough;
  const pump = pumpInput(ctx.io.stdin, call.body, filter);
  try {
    await relayResponse(response.body, false, {
      stdout: ctx.io.stdout,
      stderr: ctx.io.stderr,
      transport: ctx.transport,
    });
    return 0;
  } catch (err) {
    call.cancel();
    if (ctx.signal.aborted) throw RouterError.cancelled('cancelled', err);
    throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
  } finally {
    pump.stop();
    release();
    if (ctx.signal.aborted) call.cancel();
    else if (!pump.bodyEnded && !call.body.writableEnded) call.body.end();
  }
}

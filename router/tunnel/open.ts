import { FRAMING_VERSION, RESPONSE_FRAMING_HEADER } from '../../lib/framing.js';
import { SHELL_HEADER } from '../../lib/jwt.js';
import { readBodyLimited } from '../../lib/streams.js';
import type { CellDirectory } from '../cells/directory.js';
import type { AllowedAnswer } from '../cells/internal-api.js';
import type { UpstreamCall, UpstreamResponse } from '../cells/transport.js';
import type { CellConfig } from '../config.js';
import { MisdirectedError, REMOTE_UNAVAILABLE_MESSAGE, RouterError } from '../errors.js';

/**
 * Opens one tunnel request to the owning cell's bridge:
 * `POST <cell url>/<gl_project_path>.git/<endpoint>`, with the shell JWT carrying `gl_id` the
 * release profile chose (`profiles.ts`: fresh per request by default), `Git-Protocol` when the client sent one, and our response framing. Resolves
 * once the response head is in; nothing of the client's stdin has been sent by then, so a `421`
 * can still be retried on another cell.
 */
export type TunnelEndpoint = 'ssh-upload-pack' | 'ssh-receive-pack' | 'ssh-upload-archive';

export interface TunnelTarget {
  cell: CellConfig;
  access: AllowedAnswer;
  gitProtocol: string | undefined;
  requestId: string;
  signal: AbortSignal;
}

export interface OpenTunnel {
  call: UpstreamCall;
  response: UpstreamResponse;
  framed: boolean;
  /** Detaches the cancellation hook; call when the exchange is over. */
  release(): void;
}

const MAX_ERROR_BODY = 64 * 1024;

/**
 * Opens one tunnel request. A cell's refusal (not 200) becomes the error the user sees, its
 * `{message}` or text after `refusalPrefix` (gitlab-shell names the push request that failed).
 */
export async function openTunnel(
  cells: CellDirectory,
  shellJwt: string,
  target: TunnelTarget,
  endpoint: TunnelEndpoint,
  refusalPrefix = '',
): Promise<OpenTunnel> {
  const headers: Record<string, string> = {
    [SHELL_HEADER]: shellJwt,
    [RESPONSE_FRAMING_HEADER]: FRAMING_VERSION,
    'x-request-id': target.requestId,
    'user-agent': 'gitlab-cells-router',
  };
  if (target.gitProtocol) headers['git-protocol'] = target.gitProtocol;
  const path = `/${target.access.glProjectPath}.git/${endpoint}`;
  if (target.signal.aborted) throw RouterError.cancelled('cancelled');
  let call: UpstreamCall;
  try {
    call = await cells.transport(target.cell).open({ method: 'POST', path, headers, streamBody: true });
  } catch (err) {
    throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
  }
  // Client gone or shutdown: RST_STREAM(CANCEL), so the bridge cancels Gitaly.
  const cancel = () => call.cancel();
  target.signal.addEventListener('abort', cancel, { once: true });
  const release = () => target.signal.removeEventListener('abort', cancel);
  let response: UpstreamResponse;
  try {
    response = await call.response;
  } catch (err) {
    release();
    if (target.signal.aborted) throw RouterError.cancelled('cancelled', err);
    throw RouterError.tunnelUnavailable(REMOTE_UNAVAILABLE_MESSAGE, err);
  }
  if (response.status !== 200) {
    const text = await readBodyLimited(response.body, MAX_ERROR_BODY)
      .then((read) => read.body.toString('utf8').trim())
      .catch(() => '');
    call.cancel();
    release();
    if (response.status === 421) {
      const header = response.headers['x-gitlab-cell-redirect'];
      throw new MisdirectedError(
        jsonMessage(text) || 'Misdirected Request',
        Array.isArray(header) ? header[0] : header,
      );
    }
    throw RouterError.tunnelUnavailable(`${refusalPrefix}${jsonMessage(text) || REMOTE_UNAVAILABLE_MESSAGE}`);
  }
  const framed = response.headers[RESPONSE_FRAMING_HEADER] === FRAMING_VERSION;
  return { call, response, framed, release };
}

/** `{"message": "..."}` bodies (as the cells answer 421) → the message; other text as it is. */
function jsonMessage(text: string): string {
  try {
    const v = JSON.parse(text) as { message?: unknown };
    if (v && typeof v.message === 'string') return v.message;
  } catch {
    // plain text
  }
  return text;
}

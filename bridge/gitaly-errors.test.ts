import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  asGrpcGoStatus,
  GITALY_OVERLOADED_MESSAGE,
  GITALY_UNAVAILABLE_MESSAGE,
  gitalyFailureMessage,
} from './gitaly-errors.js';

describe('gitalyFailureMessage', () => {
  it("gives gitlab-shell's text for an unavailable or overloaded Gitaly", () => {
    expect(
      gitalyFailureMessage({ code: status.UNAVAILABLE, details: 'connect ECONNREFUSED' }, 'sidechannel'),
    ).toBe(GITALY_UNAVAILABLE_MESSAGE);
    expect(gitalyFailureMessage({ code: status.RESOURCE_EXHAUSTED, details: 'limit' }, 'sidechannel')).toBe(
      GITALY_OVERLOADED_MESSAGE,
    );
  });

  it('reports a connection lost under the call (grpc-js: INTERNAL, client-side) as grpc-go does: UNAVAILABLE', () => {
    const details =
      'Received RST_STREAM with code 2 triggered by internal client error: session closed: the peer ended the socket';
    const lost = asGrpcGoStatus({ code: status.INTERNAL, details });
    expect(lost).toEqual({ code: status.UNAVAILABLE, details });
    expect(gitalyFailureMessage(lost, 'sidechannel')).toBe(GITALY_UNAVAILABLE_MESSAGE);
    const serverReset = {
      code: status.INTERNAL,
      details: 'Received RST_STREAM with code 2 (Internal server error)',
    };
    expect(asGrpcGoStatus(serverReset)).toBe(serverReset);
  });

  it("passes Gitaly's own INTERNAL texts through, including a server's reset", () => {
    const own = 'opennig sidechannel: sidechannel: receive confirmation: EOF';
    expect(gitalyFailureMessage({ code: status.INTERNAL, details: own }, 'sidechannel')).toBe(own);
    expect(gitalyFailureMessage({ code: status.INTERNAL, details: '' }, 'sidechannel')).toBe('INTERNAL');
  });

  it('names the setting when stream mode meets a Gitaly without SSHUploadPack', () => {
    const r = { code: status.UNIMPLEMENTED, details: 'unknown method SSHUploadPack' };
    expect(gitalyFailureMessage(r, 'stream')).toMatch(/set gitalyUploadPack to "sidechannel"/);
    expect(gitalyFailureMessage(r, 'sidechannel')).toBe('unknown method SSHUploadPack');
  });
});

/** @file Why a start of the stack's services failed (`stack/supervisor.ts` throws them, `stack/main.ts` tells the user). */
/** A service that did not become ready; `logTail` holds its last output lines. */
export class StartError extends Error {
  constructor(
    message: string,
    readonly service: string,
    readonly logFile: string,
    readonly logTail: string,
  ) {
    super(message);
  }
}

/** A service could not bind `address`: another process holds it (EADDRINUSE). */
export class AddressInUseError extends StartError {
  constructor(
    service: string,
    readonly address: { readonly address: string; readonly what: string },
    logFile: string,
    logTail: string,
  ) {
    super(
      `${service} cannot listen on ${address.address} (${address.what}): the address is already in use by another process`,
      service,
      logFile,
      logTail,
    );
  }
}

/** The supervisor is stopping (Ctrl-C, or a service given up): a start in progress gives up. */
export class StoppingError extends Error {}

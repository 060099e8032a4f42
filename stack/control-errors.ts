/**
 * @file The control API's error registry (`stack/control-server.ts`): each answer's `code` is one of
 * these, stable for scripts; `error` is the message.
 */
import { defineError } from '../lib/errors.js';

export const ControlUnauthorized = defineError('CONTROL_UNAUTHORIZED', 401, false);
export const ControlNotFound = defineError('CONTROL_NOT_FOUND', 404, false);
export const ControlBadRequest = defineError('CONTROL_BAD_REQUEST', 400, false);
/** The service answered `ok: false` (a bad argument, an unknown op). */
export const ControlRefused = defineError('CONTROL_REFUSED', 400, false);
/** No answer within the timeout, or the service exited meanwhile. */
export const ControlUnanswered = defineError('CONTROL_UNANSWERED', 502, true);
export const ControlMethodNotAllowed = defineError('CONTROL_METHOD_NOT_ALLOWED', 405, false);

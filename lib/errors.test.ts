import { describe, expect, it } from 'vitest';
import { AppError, defineError, errorFactory, isAppError } from './errors.js';

describe('defineError', () => {
  const NotFound = defineError('X_NOT_FOUND', 404);
  const Broken = defineError('X_BROKEN', 500);

  it('makes AppErrors with the code, status and system flag of the entry', () => {
    const cause = new Error('low level');
    const err = NotFound('no such thing', cause);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'X_NOT_FOUND',
      statusCode: 404,
      system: false,
      message: 'no such thing',
    });
    expect(err.cause).toBe(cause);
    expect(Broken('x').system).toBe(true);
    expect(defineError('X_POLICY', 503, false)('x').system).toBe(false);
  });

  it('carries its code, so callers branch on the factory, not on a string', () => {
    expect(NotFound.code).toBe('X_NOT_FOUND');
    expect(NotFound.statusCode).toBe(404);
    expect(NotFound.is(NotFound('a'))).toBe(true);
    expect(NotFound.is(Broken('a'))).toBe(false);
    expect(NotFound.is(new Error('X_NOT_FOUND'))).toBe(false);
    expect(NotFound.is(undefined)).toBe(false);
  });
});

describe('errorFactory', () => {
  class RpcLike extends AppError {
    constructor(
      message: string,
      readonly grpc: number,
    ) {
      super('X_RPC', message, { statusCode: 502 });
    }
  }

  it('gives a subclass registry the same code-bearing factories', () => {
    const Failed = errorFactory('X_RPC', 502, (message) => new RpcLike(message, 13));
    const err = Failed('boom');
    expect(err).toBeInstanceOf(RpcLike);
    expect(err.grpc).toBe(13);
    expect(Failed.code).toBe('X_RPC');
    expect(Failed.is(err)).toBe(true);
    expect(isAppError(err)).toBe(true);
  });
});

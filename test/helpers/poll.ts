import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one polling helper of the tests: calls `pred` every `stepMs` until it returns a truthy value,
 * which it resolves with; rejects with "<what> not met within <ms> ms" once `ms` have passed.
 * `pred` is asked once more at the deadline, so a slow last step does not lose a late success.
 */
export async function waitUntil<T>(
  pred: () => T | undefined | null | false | 0 | '',
  ms: number,
  what = 'condition',
  stepMs = 20,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = pred();
    if (value) return value;
    if (Date.now() >= deadline) {
      const last = pred();
      if (last) return last;
      throw new Error(`${what} not met within ${ms} ms`);
    }
    await sleep(Math.min(stepMs, Math.max(1, deadline - Date.now())));
  }
}

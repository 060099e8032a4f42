/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws). */
export async function waitFor<T>(
  check: () => T | undefined | false,
  timeoutMs = 5000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

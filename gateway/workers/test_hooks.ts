/**
 * Test-only hooks of the data-plane workers (blocking a worker's event loop on purpose). They are
 * on only when the process was started with `GATEWAY_TEST_HOOKS=1` in its environment: no
 * configuration key, management route or cloud message turns them on or reaches them.
 */

/** The environment variable that enables the hooks. */
export const TEST_HOOKS_ENV = "GATEWAY_TEST_HOOKS";

/** True when this process's environment enables the test hooks (never prompts). */
export function testHooksEnabled(): boolean {
  try {
    if (Deno.permissions.querySync({ name: "env", variable: TEST_HOOKS_ENV }).state !== "granted") {
      return false;
    }
    return Deno.env.get(TEST_HOOKS_ENV) === "1";
  } catch {
    return false;
  }
}

/**
 * Holds this thread's event loop (nothing else of the isolate runs meanwhile) until `release[0]`
 * becomes non-zero or `ms` have passed. The thread sleeps in slices rather than spinning, so a
 * frozen worker costs the machine no CPU. A terminate() does not end it (Deno stops a worker only
 * when its event loop turns): the thread goes on until released, as a real freeze would.
 */
export function blockEventLoop(ms: number, release?: Int32Array): void {
  const flag = release ?? new Int32Array(new SharedArrayBuffer(4));
  const end = performance.now() + ms;
  while (Atomics.load(flag, 0) === 0) {
    const left = end - performance.now();
    if (left <= 0) return;
    Atomics.wait(flag, 0, 0, Math.min(left, 50));
  }
}

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

/** Keeps this thread's event loop busy for `ms` (nothing else of the isolate runs meanwhile). */
export function blockEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy on purpose
  }
}

/** Process environment changes for the length of one call (restored after, even on error). */

/** Runs `fn` with `vars` set in the process environment, then restores the previous values. */
export async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const previous = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(previous)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

/**
 * Runs `fn` with the gateway's test hooks on (`GATEWAY_TEST_HOOKS=1`), and leaves them on. Test
 * files run in parallel in one process, which has one environment: a file restoring the variable
 * when it ends would turn the hooks off under another file's gateway (its pool refuses the hook,
 * its replaced worker starts without it). Nothing tests that the hooks are off in this process.
 */
export async function withTestHooks<T>(fn: () => Promise<T>): Promise<T> {
  Deno.env.set("GATEWAY_TEST_HOOKS", "1");
  return await fn();
}

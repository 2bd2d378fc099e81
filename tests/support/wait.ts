/** Polling helpers shared by the process starters. */

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** Give up after this many milliseconds. */
  timeoutMs: number;
  /** Pause between attempts. */
  intervalMs?: number;
  /** Named in the timeout error. */
  description: string;
}

/** Resolves once `check` returns true; rethrows what `check` throws; rejects on timeout. */
export async function waitFor(check: () => Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 50;
  while (true) {
    if (await check()) return;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.description}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** True when a TCP connection to `hostname:port` is accepted. */
export async function canConnect(port: number, hostname = "127.0.0.1"): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname, port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * A webhook receiver for tests: a `Deno.serve` on a free loopback port that records every POST
 * (headers and JSON body) and answers the status the test sets (200 by default), or is stopped to
 * stand for a webhook that is down.
 */
import { waitFor } from "./wait.ts";

/** One request the receiver got. */
export interface ReceivedHook {
  method: string;
  path: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook`. */
  url: string;
  port: number;
  received: ReceivedHook[];
  /** The status of the next answers. */
  answer(status: number): void;
  /** Resolves once `n` requests arrived (rejects after `timeoutMs`). */
  waitForCount(n: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a receiver on a free loopback port. */
export function startWebhookReceiver(): WebhookReceiver {
  const received: ReceivedHook[] = [];
  let status = 200;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const text = await req.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text);
    } catch {
      body = { unparsed: text };
    }
    received.push({
      method: req.method,
      path: new URL(req.url).pathname,
      headers: req.headers,
      body,
    });
    return new Response(status < 300 ? "ok" : "failing", { status });
  });
  const port = server.addr.port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answer: (s) => status = s,
    waitForCount: (n, timeoutMs = 10_000) =>
      waitFor(() => Promise.resolve(received.length >= n), {
        timeoutMs,
        description: `${n} webhook request(s)`,
      }),
    stop: () => server.shutdown(),
  };
}

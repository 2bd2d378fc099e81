/**
 * kill -9 in the middle of a burst: the gateway process is killed at a random point of 300
 * queued POSTs, 32 in flight (three times); every message it answered 202 is on disk whole (each file passes its
 * checksum) and, after a restart, delivered exactly once, with nothing left behind.
 */
import { assert, assertEquals } from "./assert.ts";
import { startUpstream } from "./harness.ts";
import { freePort, startGateway, waitFor } from "./support/mod.ts";
import { readMessage } from "../gateway/delivery/mod.ts";

/**
 * Messages of a round. The kill lands while 32 are in flight at any point past the first 50 (up to
 * 250); 1,000 and then 500 (as before) only moved more files through the same windows, at more
 * disk and CPU time (about a millisecond of CPU per message, sent and later delivered).
 */
const MESSAGES = 300;

function config(port: number, mgmt: number, upstream: string, queueDir: string): string {
  return `
[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${mgmt}
[logging]
level = "warn"
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
retries = 0
[backends.out.options]
base_url = "${upstream}"
[backends.out.queue]
dir = "${queueDir}"
ordering = "parallel"
concurrency = 8
initial_backoff_ms = 50
max_backoff_ms = 200
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`;
}

Deno.test("delivery: kill -9 during a 300-message burst loses no accepted message and delivers each once", async () => {
  let up = false;
  const deliveries = new Map<string, number>();
  const upstream = startUpstream((req) => {
    if (!up) return new Response("down", { status: 503 });
    const id = req.headers.get("idempotency-key") ?? "none";
    deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
    return new Response("ok");
  });
  const queueDir = await Deno.makeTempDir({ prefix: "gw-crash-" });
  const accepted = new Set<string>();
  try {
    for (let round = 0; round < 3; round++) {
      up = false;
      const port = freePort();
      const gw = await startGateway({
        configText: config(port, freePort(), upstream.url, queueDir),
      });
      const killAt = 50 + Math.floor(Math.random() * (MESSAGES - 100));
      let answered = 0;
      let killed = false;
      const send = async (i: number) => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/in/r${round}/${i}`, {
            method: "POST",
            body: `round ${round} message ${i}`,
          });
          if (res.status === 202) {
            accepted.add((await res.json()).delivery_id);
            if (++answered === killAt && !killed) {
              killed = true;
              gw.process.kill("SIGKILL");
            }
          } else await res.body?.cancel();
        } catch {
          // the gateway is gone: this one was not answered
        }
      };
      // 32 at a time, like a sender with a connection pool.
      let next = 0;
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (next < MESSAGES && !killed) await send(next++);
      }));
      if (!killed) gw.process.kill("SIGKILL");
      await gw.process.status;
      await gw.stop().catch(() => {});
      // Whatever is in ready/ is whole.
      for await (const e of Deno.readDir(`${queueDir}/ready`)) {
        if (e.name.endsWith(".msg")) await readMessage(`${queueDir}/ready/${e.name}`);
      }
      assert(answered >= killAt, `round ${round}: ${answered} answered`);
    }

    // Restart with the upstream up: everything accepted arrives, once.
    up = true;
    const port = freePort();
    const gw = await startGateway({ configText: config(port, freePort(), upstream.url, queueDir) });
    try {
      await waitFor(async () => {
        const q = (await (await gw.mgmtFetch("/admin/queues")).json()).queues[0];
        return q.depth === 0 && q.in_flight === 0;
      }, { timeoutMs: 60_000, description: "the queue drained after the restart" });
      const missing = [...accepted].filter((id) => !deliveries.has(id));
      assertEquals(missing, [], "every accepted message delivered");
      const twice = [...deliveries].filter(([, n]) => n > 1);
      assertEquals(twice, [], "none twice");
      const leftovers = async () => {
        const names: string[] = [];
        for (const sub of ["ready", "tmp", "dead"]) {
          for await (const e of Deno.readDir(`${queueDir}/${sub}`)) names.push(`${sub}/${e.name}`);
        }
        return names;
      };
      // A delivered message's files are removed just after the queue counts it delivered (off the
      // event loop, once the next request went out): the last few may still be going.
      await waitFor(async () => (await leftovers()).length === 0, {
        timeoutMs: 10_000,
        description: "the delivered messages' files removed",
      }).catch(() => {});
      assertEquals(await leftovers(), []);
    } finally {
      await gw.stop();
    }
  } finally {
    await upstream.stop();
    await Deno.remove(queueDir, { recursive: true });
  }
});

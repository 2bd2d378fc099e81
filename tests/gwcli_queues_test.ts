/**
 * gwcli's queue commands against a real gateway process with a queued backend: gateway:queues,
 * gateway:queue-messages (waiting and dead), gateway:queue-retry, gateway:queue-purge (refused
 * without --yes).
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { expectExit, type GwcliHome, withGwcliHome } from "./gwcli_support.ts";
import { startUpstream } from "./harness.ts";
import { freePort, startGateway, waitFor } from "./support/mod.ts";

async function run(home: GwcliHome, args: string[], code = 0) {
  return expectExit(await home.run(args), code, `gwcli ${args.join(" ")}`);
}

Deno.test("gwcli queues: list, messages, dead letters, retry and purge", async () => {
  let status = 400;
  const upstream = startUpstream(() => new Response("no", { status }));
  const dataPort = freePort();
  const mgmtPort = freePort();
  const queueDir = await Deno.makeTempDir({ prefix: "gwcli-queue-" });
  try {
    await withGwcliHome(async (home) => {
      await using _gateway = await startGateway({
        configText: `
[network.main]
bind = "127.0.0.1"
port = ${dataPort}
[management]
bind = "127.0.0.1"
port = ${mgmtPort}
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${upstream.url}"
[backends.lab.queue]
dir = "${queueDir}"
initial_backoff_ms = 50
[pipelines.p]
endpoints = ["in"]
backends = ["lab"]
`,
        env: { HOME: home.home, GATEWAY_MANAGEMENT_TOKEN: "" },
      });
      await run(home, ["gateway:add", "-p", String(mgmtPort), "-l", "edge"]);
      const res = await fetch(`http://127.0.0.1:${dataPort}/in/orders`, {
        method: "POST",
        body: "{}",
      });
      assertEquals(res.status, 202);
      const { delivery_id } = await res.json();
      await waitFor(
        async () =>
          /│ lab +│ 0 +│ 0 +│ 0 +│ 1 +│/.test((await run(home, ["gateway:queues"])).stdout),
        {
          timeoutMs: 5000,
          description: "one dead letter in gateway:queues",
        },
      );
      const dead = (await run(home, ["gateway:queue-messages", "lab", "--dead"])).stdout;
      assertMatch(dead, new RegExp(`│ ${delivery_id} +│`));
      assertMatch(dead, /POST \/orders/);
      assertMatch(dead, /HTTP 400/);
      assertMatch(
        (await run(home, ["gateway:queue-messages", "lab"])).stdout,
        /No message is waiting/,
      );

      const refused = await run(home, ["gateway:queue-purge", "lab"], 1);
      assertMatch(refused.stderr, /purging deletes every dead letter of lab/);
      assertMatch(refused.stderr, /--yes/);

      status = 201;
      assertMatch(
        (await run(home, ["gateway:queue-retry", "lab", "--message", delivery_id])).stdout,
        /Requeued 1 dead letter\(s\) of lab on 'edge'/,
      );
      await waitFor(async () => {
        const json = JSON.parse((await run(home, ["gateway:queues", "--json"])).stdout);
        return json.queues[0].delivered_total === 1;
      }, { timeoutMs: 5000, description: "the retried letter delivered" });

      status = 400;
      const again = await fetch(`http://127.0.0.1:${dataPort}/in/orders`, {
        method: "POST",
        body: "{}",
      });
      await again.body?.cancel();
      await waitFor(
        async () =>
          /│ lab +│ 0 +│ 0 +│ 0 +│ 1 +│/.test((await run(home, ["gateway:queues"])).stdout),
        {
          timeoutMs: 5000,
          description: "a new dead letter",
        },
      );
      assertMatch(
        (await run(home, ["gateway:queue-purge", "lab", "-y"])).stdout,
        /Deleted 1 dead letter\(s\) of lab/,
      );
      const missing = await run(home, ["gateway:queues", "--json"]);
      assertEquals(JSON.parse(missing.stdout).queues[0].dead, 0);
      assertMatch(
        (await run(home, ["gateway:queue-messages", "nope"], 1)).stderr,
        /queue_not_found/,
      );
    });
  } finally {
    await upstream.stop();
    await Deno.remove(queueDir, { recursive: true });
  }
});

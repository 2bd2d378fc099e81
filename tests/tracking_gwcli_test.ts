/**
 * gwcli's message commands against a real gateway process that tracks an HL7-over-HTTP-like text
 * pipeline and an HTTP upstream: messages:search (by alias, as a table and as JSON),
 * messages:show (metadata; --content pretty-prints each stage), messages:replay,
 * messages:resend --file, and messages:dead-letter on a queued backend's dead letter (shown, then
 * sent again with --resend-file).
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { expectExit, type GwcliHome, withGwcliHome } from "./gwcli_support.ts";
import { startUpstream } from "./harness.ts";
import { freePort, startGateway, waitFor } from "./support/mod.ts";
import { trackingTable, writeTrackingIdentity } from "./support/tracking.ts";

async function run(home: GwcliHome, args: string[], code = 0) {
  return expectExit(await home.run(args), code, `gwcli ${args.join(" ")}`);
}

Deno.test("gwcli messages: search, show --content, replay, resend and dead-letter", async () => {
  let status = 200;
  const upstream = startUpstream((_req, body) =>
    status === 200
      ? Response.json({ ok: true, got: new TextDecoder().decode(body) })
      : new Response("refused", { status })
  );
  const dataPort = freePort();
  const mgmtPort = freePort();
  const dir = await Deno.makeTempDir({ prefix: "gwcli-messages-" });
  const identity = await writeTrackingIdentity(dir);
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
[endpoints.queued]
service = "http"
[endpoints.queued.options]
path_prefix = "/queued"
[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${upstream.url}"
[backends.later]
service = "http"
[backends.later.options]
base_url = "${upstream.url}"
[backends.later.queue]
dir = "${dir}/queue"
max_attempts = 1
[pipelines.p]
endpoints = ["in"]
backends = ["lab"]
[pipelines.p.tracking]
content = ["received", "backend_response"]
[pipelines.q]
endpoints = ["queued"]
backends = ["later"]
${trackingTable(dir, identity)}
`,
        env: { HOME: home.home, GATEWAY_MANAGEMENT_TOKEN: "" },
      });
      await run(home, ["gateway:add", "-p", String(mgmtPort), "-l", "edge"]);
      const res = await fetch(`http://127.0.0.1:${dataPort}/in/Patient/p-42`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: '{"resourceType":"Patient","id":"p-42","active":true}',
      });
      assertEquals(res.status, 200);
      await res.body?.cancel();

      let id = "";
      await waitFor(async () => {
        const json = JSON.parse((await run(home, ["messages:search", "--json"])).stdout);
        id = json.messages[0]?.id ?? "";
        return id !== "";
      }, { timeoutMs: 10_000, description: "the tracked message in messages:search" });
      const table = (await run(home, ["messages:search", "--pipeline", "p", "--status", "2xx"]))
        .stdout;
      assertMatch(table, new RegExp(`│ ${id} +│`));
      assertMatch(table, /PUT \/Patient\/p-42/);
      assertMatch(table, /lab:200/);
      assertMatch(
        (await run(home, ["messages:search", "--field", "endpoint_missing=x"])).stdout +
          (await run(home, ["messages:search", "--field", "endpoint_missing=x"])).stderr,
        /No tracked message matches/,
      );

      const shown = (await run(home, ["messages:show", id])).stdout;
      assertMatch(shown, /see them with --content|Kept: received, backend_response:lab/);
      assert(!shown.includes('"active"'), "no content without --content");
      const content = (await run(home, ["messages:show", id, "--content"])).stdout;
      // Pretty-printed JSON of the received body and the upstream's answer.
      assertMatch(content, /── received PUT \/Patient\/p-42/);
      assertMatch(content, /\n {2}"active": true/);
      assertMatch(content, /── backend_response \(lab\) → 200/);

      assertMatch((await run(home, ["messages:replay", id])).stdout, /^200 from lab on 'edge'/);
      assertEquals(
        new TextDecoder().decode(upstream.received[1].body),
        '{"resourceType":"Patient","id":"p-42","active":true}',
      );
      await Deno.writeTextFile(
        `${dir}/edited.json`,
        '{"resourceType":"Patient","id":"p-42","active":false}',
      );
      assertMatch(
        (await run(home, [
          "messages:resend",
          id,
          "--file",
          `${dir}/edited.json`,
          "--backend",
          "lab",
        ]))
          .stdout,
        /^200 from lab/,
      );
      assertEquals(
        new TextDecoder().decode(upstream.received[2].body),
        '{"resourceType":"Patient","id":"p-42","active":false}',
      );
      assertMatch(
        (await run(home, ["messages:replay", "nope"], 1)).stderr,
        /message_not_found/,
      );

      // A dead letter with its content.
      status = 400;
      const queued = await fetch(`http://127.0.0.1:${dataPort}/queued/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"order":"ORD-9"}',
      });
      const { delivery_id } = await queued.json();
      await waitFor(async () => {
        const json = JSON.parse((await run(home, ["gateway:queues", "--json"])).stdout);
        return json.queues[0].dead === 1;
      }, { timeoutMs: 10_000, description: "the dead letter" });
      const letter = (await run(home, ["messages:dead-letter", "later", delivery_id])).stdout;
      assertMatch(letter, new RegExp(`^${delivery_id} \\(dead\\) POST /orders`));
      assertMatch(letter, /"order": "ORD-9"/);

      // Fixed and sent again from a file: a new delivery; the dead letter is gone.
      status = 200;
      await Deno.writeTextFile(`${dir}/fixed.json`, '{"order":"ORD-9","fixed":true}');
      const before = upstream.received.length;
      const resent = (await run(home, [
        "messages:dead-letter",
        "later",
        delivery_id,
        "--resend-file",
        `${dir}/fixed.json`,
        "--content-type",
        "application/json",
      ])).stdout;
      const match = resent.match(
        new RegExp(`^Dead letter ${delivery_id} of later sent again as delivery (\\S+) on 'edge'`),
      );
      assert(match && match[1] !== delivery_id, resent);
      await waitFor(async () => {
        const json = JSON.parse((await run(home, ["gateway:queues", "--json"])).stdout);
        return json.queues[0].dead === 0 && json.queues[0].depth === 0 &&
          upstream.received.length > before;
      }, { timeoutMs: 10_000, description: "the edited dead letter delivered" });
      assertEquals(
        new TextDecoder().decode(upstream.received.at(-1)!.body),
        '{"order":"ORD-9","fixed":true}',
      );
      assertMatch(
        (await run(home, [
          "messages:dead-letter",
          "later",
          delivery_id,
          "--resend-file",
          `${dir}/fixed.json`,
        ], 1))
          .stderr,
        /not_found/,
      );
    });
  } finally {
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

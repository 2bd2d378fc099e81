/**
 * Edit-and-resend of dead letters through the management API, for both queue stores (the file
 * store, and NATS JetStream with Debian's nats-server started here): an HTTP upstream refuses (400)
 * a body holding a marker, the queued message goes dead, an operator reads it and sends it again
 * with the body fixed: the upstream receives the edited body, the dead letter is gone, the queue's
 * figures say so, and the audit trail has who, the backend, both delivery ids and the edit's hash,
 * never the content. Viewers are refused (403), an unknown dead letter is 404.
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { requirePeer } from "./support/peers.ts";
import { startNats } from "./support/nats.ts";
import { waitFor } from "./support/wait.ts";

const VIEWER = "viewer-token-0123456789abcdef0123456789";
const OPERATOR = "operator-token-0123456789abcdef012345678";
const MARKER = "REFUSE-ME-4417";

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The scenario against a gateway whose backend `out` is queued with `queueToml`. */
async function resendScenario(queueToml: string): Promise<void> {
  const received: { body: string; type: string | null }[] = [];
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.text();
      if (body.includes(MARKER)) return new Response("bad field", { status: 400 });
      received.push({ body, type: req.headers.get("content-type") });
      return new Response("{}", { status: 200 });
    },
  );
  const dir = await Deno.makeTempDir({ prefix: "dead-resend-" });
  await Deno.writeTextFile(`${dir}/viewer-token`, VIEWER);
  await Deno.writeTextFile(`${dir}/operator-token`, OPERATOR);
  const gw = await startTestGateway(`
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
retries = 0
[backends.out.options]
base_url = "http://127.0.0.1:${upstream.addr.port}"
[backends.out.queue]
${queueToml}
max_attempts = 2
initial_backoff_ms = 20
max_backoff_ms = 50
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
[management.tokens.look]
role = "viewer"
token_file = "${dir}/viewer-token"
[management.tokens.ops]
role = "operator"
token_file = "${dir}/operator-token"
[audit]
file = "${dir}/audit.jsonl"
`);
  const as = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${gw.mgmt}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body ? { "content-type": "application/json" } : {}),
      },
    });
  const queue = async () => {
    const res = await as(VIEWER, "/admin/queues");
    return (await res.json()).queues[0] as Record<string, number>;
  };
  try {
    const sent = JSON.stringify({ resourceType: "Patient", note: MARKER });
    const res = await fetch(`${gw.url}/in/Patient`, {
      method: "POST",
      headers: { "content-type": "application/fhir+json" },
      body: sent,
    });
    assertEquals(res.status, 202);
    const old = (await res.json()).delivery_id as string;
    await waitFor(async () => {
      const q = await queue();
      return q.dead === 1 && q.depth === 0;
    }, { timeoutMs: 15_000, description: "the refused message in the dead letters" });

    // The content, through the store (both stores).
    const content = await as(OPERATOR, `/admin/queues/out/messages/${old}/content`);
    assertEquals(content.status, 200, await content.clone().text());
    const letter = await content.json();
    assertEquals(letter.state, "dead");
    assertEquals(letter.view.text, sent);
    assertEquals(letter.size, sent.length);
    assertEquals(letter.truncated, false);

    const fixed = JSON.stringify({ resourceType: "Patient", note: "FIXED-BY-OPS" });
    const resend = (token: string, id: string, body: unknown) =>
      as(token, `/admin/queues/out/messages/${id}/resend`, {
        method: "POST",
        body: JSON.stringify(body),
      });
    // A viewer may not; an unknown dead letter is 404; what is not a delivery id 400.
    const refused = await resend(VIEWER, old, { body: fixed });
    assertEquals(refused.status, 403);
    assertEquals((await refused.json()).error.code, "forbidden");
    const unknown = await resend(OPERATOR, "1700000000000-000001-0a0b0c0d", { body: fixed });
    assertEquals(unknown.status, 404);
    assertEquals((await unknown.json()).error.code, "not_found");
    const invalid = await resend(OPERATOR, "nope", { body: fixed });
    assertEquals(invalid.status, 400);
    await invalid.body?.cancel();
    const noBody = await resend(OPERATOR, old, {});
    assertEquals(noBody.status, 400);
    await noBody.body?.cancel();
    assertEquals((await queue()).dead, 1);

    // The operator's edit: a new message, delivered; the dead letter gone.
    const ok = await resend(OPERATOR, old, {
      body_base64: btoa(fixed),
      content_type: "application/json",
    });
    assertEquals(ok.status, 200, await ok.clone().text());
    const answer = await ok.json();
    assertEquals(answer.resent, old);
    assertEquals(answer.backend, "out");
    const fresh = answer.delivery_id as string;
    assert(fresh !== old, "a new delivery id");
    await waitFor(() => Promise.resolve(received.length === 1), {
      timeoutMs: 15_000,
      description: "the edited body at the upstream",
    });
    assertEquals(received[0], { body: fixed, type: "application/json" });
    await waitFor(async () => {
      const q = await queue();
      return q.dead === 0 && q.depth === 0 && q.in_flight === 0;
    }, { timeoutMs: 15_000, description: "no dead letter, nothing waiting" });
    const dead = await (await as(VIEWER, "/admin/queues/out/messages?state=dead")).json();
    assertEquals(dead.messages, []);
    const gone = await as(OPERATOR, `/admin/queues/out/messages/${old}/content`);
    assertEquals(gone.status, 404);
    await gone.body?.cancel();
    const again = await resend(OPERATOR, old, { body: fixed });
    assertEquals(again.status, 404);
    await again.body?.cancel();

    // Audited: who, the backend, both ids and the edit's hash; never the content.
    let audit = "";
    await waitFor(async () => {
      audit = await Deno.readTextFile(`${dir}/audit.jsonl`).catch(() => "");
      return audit.includes("queue.dead_letter_resent");
    }, { timeoutMs: 5000, description: "the resend in the audit trail" });
    const acts = audit.trim().split("\n").map((l) => JSON.parse(l)).filter((e) =>
      String(e.event).startsWith("queue.")
    );
    assertEquals(acts.map((e) => e.event), [
      "queue.dead_letter_viewed",
      "queue.dead_letter_resent",
    ]);
    const act = acts[1];
    assertEquals(act.actor, "ops");
    assertEquals(act.actor_role, "operator");
    assertEquals(act.backend, "out");
    assertEquals(act.message_id, old);
    assertEquals(act.new_delivery_id, fresh);
    assertEquals(act.edited_sha256, await sha256Hex(fixed));
    assertEquals(act.edited_bytes, fixed.length);
    assert(!audit.includes(MARKER) && !audit.includes("FIXED-BY-OPS"), "content in the audit");
  } finally {
    await gw.stop();
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("dead letters: edit and resend through the management API (file store)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dead-resend-queue-" });
  try {
    await resendScenario(`dir = "${dir}"`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "dead letters: edit and resend through the management API (nats store)",
  ignore: !requirePeer("NATS JetStream", "nats-server", "nats-server"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using nats = await startNats({ size: 1, auth: { token: "t0ken-for-tests" } });
    await resendScenario(`store = "nats"
nats_servers = ${JSON.stringify(nats.servers)}
nats_token = "t0ken-for-tests"
nats_stream = "GW_TEST_RESEND"`);
  },
});

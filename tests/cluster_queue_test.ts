/**
 * The cluster of issue 40: 3 gateway processes behind HAProxy share one delivery queue in a
 * 3-server NATS JetStream cluster (Debian's nats-server, 3 replicas). 1,000 messages are sent
 * through HAProxy to a queued backend whose upstream is down; in the middle one gateway and the
 * NATS server leading the stream are killed with SIGKILL; then the upstream comes up. Every
 * message a gateway acknowledged (202) reaches the upstream at least once: none is lost.
 */
import { connect } from "nats";
import { assert, assertEquals } from "./assert.ts";
import { requirePeer } from "./support/peers.ts";
import { startNats } from "./support/nats.ts";
import { startHaproxy } from "./support/haproxy.ts";
import { type GatewayProcess, startGateway } from "./support/gateway.ts";
import { freePort } from "./support/ports.ts";
import { waitFor } from "./support/wait.ts";

/**
 * Messages sent. The kills land a third of the way in, with 16 in flight, and two thirds are sent
 * while and after the cluster recovers; 2,000 (as before) only moved more messages through the
 * same windows, at about 1.5 ms of CPU each across the processes.
 */
const MESSAGES = 1_000;
const SENDERS = 16;
const STREAM = "CLUSTER_TEST";

function gatewayConfig(dataPort: number, mgmtPort: number, upstream: number, servers: string[]) {
  return `
[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}

[logging]
level = "error"

[runtime]
workers = 1

[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"

[backends.out]
service = "http"
timeout_secs = 2
retries = 0
[backends.out.options]
base_url = "http://127.0.0.1:${upstream}"
[backends.out.queue]
store = "nats"
ordering = "parallel"
concurrency = 32
max_bytes = 1073741824
initial_backoff_ms = 100
max_backoff_ms = 800
nats_servers = ${JSON.stringify(servers)}
nats_stream = "${STREAM}"
nats_replicas = 3
nats_ack_wait_secs = 3
nats_timeout_secs = 15

[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`;
}

Deno.test({
  name:
    "cluster: 3 gateways behind HAProxy on a 3-server JetStream cluster; kill -9 of a gateway and of a NATS server; every acknowledged message delivered",
  ignore: !requirePeer("NATS JetStream", "nats-server", "nats-server") ||
    !requirePeer("HAProxy", "haproxy", "haproxy"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const started = performance.now();
    await using nats = await startNats({ size: 3 });
    const upstreamPort = freePort();
    const ports = [0, 1, 2].map(() => ({ data: freePort(), mgmt: freePort() }));
    const gateways: GatewayProcess[] = await Promise.all(
      ports.map((p) =>
        startGateway({
          configText: gatewayConfig(p.data, p.mgmt, upstreamPort, nats.servers),
        })
      ),
    );
    let upstream: Deno.HttpServer | undefined;
    try {
      await using haproxy = await startHaproxy({ ports: ports.map((p) => p.data) });
      const acknowledged = new Set<number>();
      let refused = 0;
      let next = 0;
      let killed: Promise<void> | undefined;
      let killedNats: string | undefined;
      const killOne = async () => {
        // A gateway, and the NATS server leading the queue's stream (the worst one to lose).
        gateways[1].process.kill("SIGKILL");
        const nc = await connect(nats.clientOptions());
        let leader: string | undefined;
        try {
          const jsm = await nc.jetstreamManager();
          leader = (await jsm.streams.info(STREAM)).cluster?.leader;
        } finally {
          await nc.close();
        }
        const victim = nats.nodes.find((n) => n.name === leader) ?? nats.nodes[0];
        await victim.kill();
        killedNats = victim.name;
      };
      const send = async () => {
        while (next < MESSAGES) {
          const n = next++;
          if (n === Math.floor(MESSAGES / 3)) killed = killOne();
          // Sent until a gateway acknowledges it (a refusal or a broken connection is not one).
          for (let attempt = 0; attempt < 300; attempt++) {
            try {
              const res = await fetch(`${haproxy.url}/in/orders/${n}`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ n }),
              });
              const text = await res.text();
              if (res.status !== 202 && refused < 3 && Deno.env.get("CLUSTER_TEST_TRACE")) {
                console.log(res.status, text);
              }
              if (res.status === 202) {
                acknowledged.add(n);
                break;
              }
            } catch {
              // the connection broke (a gateway killed): not acknowledged, sent again
            }
            refused++;
            // A client's back-off before it sends again (pacing, not a wait for an event): the
            // pass condition is the acknowledgement, within 300 attempts (about a minute of
            // patience while the cluster recovers), not when it comes.
            await new Promise((r) => setTimeout(r, 20 * Math.min(attempt + 1, 10)));
          }
        }
      };
      const progress = setInterval(() => {
        if (Deno.env.get("CLUSTER_TEST_TRACE")) {
          console.log(`sent ${next}, acknowledged ${acknowledged.size}, refusals ${refused}`);
        }
      }, 2_000);
      await Promise.all(Array.from({ length: SENDERS }, send)).finally(() =>
        clearInterval(progress)
      );
      await killed;
      // Both were killed in the middle, as the test says.
      assertEquals((await gateways[1].process.status).signal, "SIGKILL");
      assert(killedNats && !nats.nodes.find((n) => n.name === killedNats)!.running());
      const sent = performance.now();
      assertEquals(acknowledged.size, MESSAGES, "every message was acknowledged in the end");
      // The upstream comes up: everything acknowledged arrives, whichever gateway delivers it.
      const delivered = new Map<number, number>();
      upstream = Deno.serve(
        { hostname: "127.0.0.1", port: upstreamPort, onListen: () => {} },
        async (req) => {
          const { n } = await req.json();
          delivered.set(n, (delivered.get(n) ?? 0) + 1);
          return new Response("ok");
        },
      );
      await waitFor(() => Promise.resolve([...acknowledged].every((n) => delivered.has(n))), {
        timeoutMs: 90_000,
        intervalMs: 100,
        description: "every acknowledged message at the upstream",
      });
      const done = performance.now();
      const missing = [...acknowledged].filter((n) => !delivered.has(n));
      assertEquals(missing, []);
      const duplicates = [...delivered.values()].filter((c) => c > 1).length;
      // The shared queue empties, and the surviving gateways delivered every message between
      // them (the upstream was down until now, so the killed one delivered none): which of the
      // two delivered how many is the work queue's business, not a property to assert.
      await waitFor(async () => {
        const res = await gateways[0].mgmtFetch("/admin/queues");
        return (await res.json()).queues[0].depth === 0;
      }, { timeoutMs: 10_000, description: "the shared queue empty" });
      const stats = await Promise.all([gateways[0], gateways[2]].map(async (g) => {
        const res = await g.mgmtFetch("/admin/queues");
        return (await res.json()).queues[0] as Record<string, number>;
      }));
      assert(
        stats.reduce((sum, s) => sum + s.delivered_total, 0) >= MESSAGES,
        JSON.stringify(stats),
      );
      console.log(
        `cluster: ${MESSAGES} acknowledged (${refused} refusals sent again) in ${
          Math.round(sent - started)
        } ms from the start; all delivered ${Math.round(done - sent)} ms after the upstream ` +
          `came up; ${duplicates} delivered twice; NATS server ${killedNats} (the stream's ` +
          `leader) killed; delivered per surviving gateway: ${
            stats.map((s) => s.delivered_total).join(", ")
          }`,
      );
    } catch (err) {
      console.error(gateways.map((g) => g.output()).join("\n").slice(-6000));
      throw err;
    } finally {
      await upstream?.shutdown();
      await Promise.all(gateways.map((g) => g.stop()));
    }
  },
});

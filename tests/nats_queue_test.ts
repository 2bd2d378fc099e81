/**
 * The NATS JetStream queue store against Debian's `nats-server`: a 3-server JetStream cluster on
 * loopback, streams with 3 replicas. Acknowledged only once stored, delivered by whichever queue
 * (gateway) pulls it, redelivered on failure with the back-off, dead letters in their own stream
 * (list, inspect, retry, purge), `fifo` one at a time across two gateways, a body over
 * `nats_max_payload` through the object store, a dead letter read back and sent again (as it was
 * or edited), and a closed gateway's message taken by another.
 */
import { connect, nkeyAuthenticator, nkeys } from "nats";
import { makeTestCa } from "./support/test_ca.ts";
import { tempDir } from "./support/temp.ts";
import { assert, assertEquals } from "./assert.ts";
import { requirePeer } from "./support/peers.ts";
import { type NatsCluster, startNats } from "./support/nats.ts";
import { waitFor } from "./support/wait.ts";
import { Logger } from "../shared/mod.ts";
import type { QueueConfig } from "../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../gateway/envelope.ts";
import { GatewayError } from "../gateway/errors.ts";
import type { QueueDeps } from "../gateway/delivery/mod.ts";
import { NatsQueue } from "../gateway/delivery/nats/mod.ts";

const HAVE = requirePeer("NATS JetStream", "nats-server", "nats-server");

let cluster: NatsCluster | undefined;
let streams = 0;

async function theCluster(): Promise<NatsCluster> {
  cluster ??= await startNats({ size: 3, auth: { user: "gw", password: "s3cret-pw" } });
  return cluster;
}

function config(c: NatsCluster, extra: Partial<QueueConfig> = {}): QueueConfig {
  streams++;
  return {
    store: "nats",
    ordering: "parallel",
    concurrency: 4,
    max_messages: 10_000,
    max_bytes: 64 << 20,
    max_attempts: 0,
    max_age_secs: 86_400,
    initial_backoff_ms: 50,
    max_backoff_ms: 200,
    fsync: true,
    fhir_conditional_create: false,
    nats_servers: c.servers,
    nats_stream: `T${streams}_${crypto.randomUUID().slice(0, 8)}`,
    nats_subject: `t${streams}.q`,
    nats_replicas: 3,
    nats_ack_wait_secs: 2,
    nats_timeout_secs: 10,
    nats_user: "gw",
    nats_password: "s3cret-pw",
    ...extra,
  };
}

const silent = new Logger({ level: "error", format: "json", sink: () => {} });

/** What a fake destination saw. */
interface Seen {
  id: string;
  body: string;
  key: string | null;
  at: number;
}

function deps(
  answer: (req: RequestEnvelope, seen: Seen[]) => number | Promise<number>,
  seen: Seen[],
  extra: Partial<QueueDeps> = {},
): QueueDeps {
  return {
    logger: silent,
    attemptTimeoutMs: 5_000,
    health: { degraded: () => {}, recovered: () => {} },
    deliver: async (req) => {
      const body = new TextDecoder().decode(await req.body.bytes());
      const status = await answer(req, seen);
      seen.push({
        id: req.metadata.delivery_id,
        body,
        key: req.headers.get("idempotency-key"),
        at: performance.now(),
      });
      if (status === 0) throw new GatewayError(502, "backend_unreachable", "connection refused");
      return new ResponseEnvelope(status, new Headers(), Body.empty());
    },
    ...extra,
  };
}

function request(n: number | string, body?: Uint8Array): RequestEnvelope {
  return new RequestEnvelope({
    id: `r${n}`,
    protocol: "http",
    method: "POST",
    path: "/Observation",
    endpoint: "api",
    headers: new Headers({
      "content-type": "application/json",
      authorization: "Bearer never-stored",
    }),
    body: body ? new Body(body, "application/octet-stream") : Body.fromData({ n }),
  });
}

const options = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name:
    "nats queue: acknowledged once the replicated stream holds it; delivered; credentials left out",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const seen: Seen[] = [];
    let open = false;
    const cfg = config(c);
    const q = await NatsQueue.open("api", cfg, deps(() => open ? 201 : 503, seen));
    try {
      const id = await q.accept(request(1));
      // Stored before accept resolved: the stream holds it, on 3 servers.
      const nc = await connect(c.clientOptions());
      try {
        const jsm = await nc.jetstreamManager();
        const stored = await jsm.streams.getMessage(cfg.nats_stream!, {
          last_by_subj: `${cfg.nats_subject}.msg.${id}`,
        });
        assert(stored.data.length > 0);
        assert(!new TextDecoder().decode(stored.data).includes("never-stored"));
        const info = await jsm.streams.info(cfg.nats_stream!);
        assertEquals(info.config.num_replicas, 3);
        assertEquals(info.cluster?.replicas?.length, 2);
      } finally {
        await nc.close();
      }
      open = true;
      await waitFor(() => Promise.resolve(seen.some((s) => s.id === id && s.key === id)), {
        timeoutMs: 15_000,
        description: "the message delivered",
      });
      await waitFor(
        () => Promise.resolve(q.stats().depth === 0 && q.stats().delivered_total === 1),
        {
          timeoutMs: 10_000,
          description: "the stream empty",
        },
      );
      assertEquals(JSON.parse(seen.at(-1)!.body), { n: 1 });
      assertEquals(q.stats().store, "nats");
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name:
    "nats queue: a failure is retried with the back-off; a 400 becomes a dead letter (list, inspect, retry, purge)",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const seen: Seen[] = [];
    let refuse = true;
    const tries = new Map<string, number>();
    const q = await NatsQueue.open(
      "api",
      config(c, { max_attempts: 5 }),
      deps((req) => {
        const id = req.metadata.delivery_id;
        const n = (tries.get(id) ?? 0) + 1;
        tries.set(id, n);
        const body = req.headers.get("x-kind");
        if (body === "bad") return refuse ? 400 : 201;
        return n < 3 ? 0 : 201;
      }, seen),
    );
    try {
      const flaky = await q.accept(request("flaky"));
      const bad = request("bad");
      bad.headers.set("x-kind", "bad");
      const deadId = await q.accept(bad);
      await waitFor(() => Promise.resolve(q.stats().dead === 1 && tries.get(flaky) === 3), {
        timeoutMs: 20_000,
        description: "the flaky one delivered on its 3rd attempt, the bad one dead",
      });
      assertEquals(q.stats().retried_total, 2);
      assertEquals(q.stats().dead_lettered_total, 1);
      const dead = await q.list("dead");
      assertEquals(dead.length, 1);
      assertEquals(dead[0].id, deadId);
      assertEquals((dead[0].dead as { reason: string }).reason, "HTTP 400");
      const one = await q.inspect(deadId);
      assertEquals(one.state, "dead");
      assertEquals(one.attempts, 1);
      // Sent again once the destination takes it.
      refuse = false;
      assertEquals(await q.retryDead(deadId), 1);
      await waitFor(
        () => Promise.resolve(seen.some((s) => s.id === deadId && true) && tries.get(deadId) === 2),
        {
          timeoutMs: 15_000,
          description: "the dead letter delivered after the retry",
        },
      );
      await waitFor(() => Promise.resolve(q.stats().dead === 0), {
        timeoutMs: 5_000,
        description: "no dead letter left",
      });
      // A second one dead-lettered, then purged.
      refuse = true;
      const bad2 = request("bad2");
      bad2.headers.set("x-kind", "bad");
      await q.accept(bad2);
      await waitFor(() => Promise.resolve(q.stats().dead === 1), {
        timeoutMs: 15_000,
        description: "a second dead letter",
      });
      assertEquals(await q.purgeDead(), 1);
      assertEquals((await q.list("dead")).length, 0);
      let missing = 0;
      await q.inspect("0000000000000-000000-00000000").catch((e) => missing = e.status);
      assertEquals(missing, 404);
      let invalid = 0;
      await q.inspect("../etc").catch((e) => invalid = e.status);
      assertEquals(invalid, 400);
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name:
    "nats queue: fifo holds a failing head and delivers one at a time, in order, across two gateways",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const seen: Seen[] = [];
    let inFlight = 0;
    let most = 0;
    let firstTries = 0;
    const cfg = config(c, { ordering: "fifo" });
    const answer = async (req: RequestEnvelope) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // A paced fake upstream (an answer takes a while, so a second delivery at once would
      // overlap); the assertions on order and on one at a time hold whatever the pause.
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      const n = JSON.parse(new TextDecoder().decode(await req.body.bytes())).n;
      if (n === 0 && ++firstTries < 3) return 503;
      return 201;
    };
    // Two gateways on the same stream: the consumer hands out one message at a time.
    const a = await NatsQueue.open("api", cfg, deps(answer, seen));
    const b = await NatsQueue.open("api", cfg, deps(answer, seen));
    try {
      for (let n = 0; n < 20; n++) await (n % 2 ? a : b).accept(request(n));
      await waitFor(() => Promise.resolve(seen.filter((s) => s.body !== "").length >= 22), {
        timeoutMs: 30_000,
        description: "20 messages delivered (the head on its 3rd attempt)",
      });
      const order = seen.map((s) => JSON.parse(s.body).n);
      assertEquals(order, [0, 0, 0, ...Array.from({ length: 19 }, (_, i) => i + 1)]);
      assertEquals(most, 1);
    } finally {
      await a.close();
      await b.close();
    }
  },
});

Deno.test({
  name:
    "nats queue: a body over nats_max_payload goes through the object store, removed once delivered",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const seen: Seen[] = [];
    const cfg = config(c, { nats_max_payload: 4096 });
    const got: Uint8Array[] = [];
    const base = deps(() => 201, seen);
    const q = await NatsQueue.open("api", cfg, {
      ...base,
      deliver: async (r, signal) => {
        got.push(await r.body.bytes());
        return await base.deliver(r, signal);
      },
    });
    try {
      const big = crypto.getRandomValues(new Uint8Array(60_000));
      // As a stream of unknown length, like a client's body.
      const req = new RequestEnvelope({
        id: "big",
        protocol: "http",
        method: "POST",
        path: "/instances",
        endpoint: "api",
        headers: new Headers({ "content-type": "application/dicom" }),
        body: new Body(new Response(big).body!, "application/dicom"),
      });
      const id = await q.accept(req);
      await waitFor(() => Promise.resolve(got.length === 1), {
        timeoutMs: 15_000,
        description: "the big message delivered",
      });
      assertEquals(new Uint8Array(got[0]), big);
      const nc = await connect(c.clientOptions());
      try {
        const os = await nc.jetstream().views.os(`${cfg.nats_stream}_BODIES`);
        await waitFor(async () => {
          const info = await os.info(id);
          return info === null || info.deleted;
        }, {
          timeoutMs: 5_000,
          description: "the body object removed",
        });
      } finally {
        await nc.close();
      }
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name:
    "nats queue: a dead letter's body read back (inline or an object) and sent again, as it was or edited",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const seen: Seen[] = [];
    const cfg = config(c, { nats_max_payload: 4096 });
    let refuse = true;
    const got: { id: string; bytes: Uint8Array; type: string | null }[] = [];
    const base = deps(() => refuse ? 400 : 201, seen);
    const q = await NatsQueue.open("api", cfg, {
      ...base,
      deliver: async (r, signal) => {
        got.push({
          id: r.metadata.delivery_id,
          bytes: await r.body.bytes(),
          type: r.headers.get("content-type"),
        });
        return await base.deliver(r, signal);
      },
    });
    const code = async (p: Promise<unknown>) => {
      try {
        await p;
        return "resolved";
      } catch (err) {
        return `${(err as GatewayError).status} ${(err as GatewayError).code}`;
      }
    };
    const deadIds = async () => (await q.list("dead")).map((m) => m.id);
    try {
      // A body over nats_max_payload: kept as an object; dead at once (400).
      const big = crypto.getRandomValues(new Uint8Array(60_000));
      const id = await q.accept(request("big", big));
      await waitFor(async () => (await deadIds()).includes(id), {
        timeoutMs: 15_000,
        description: "the big message dead",
      });
      const head = await q.deadContent(id, 1000);
      assertEquals([head.size, head.truncated, head.body.length], [60_000, true, 1000]);
      assertEquals(head.body, big.subarray(0, 1000));
      assertEquals(head.header.path, "/Observation");
      assertEquals((await q.deadContent(id, 1 << 20)).body, big);
      assertEquals(await code(q.deadContent("nope", 10)), "400 invalid_id");
      assertEquals(
        await code(q.deadContent("1700000000000-000001-0a0b0c0d", 10)),
        "404 not_found",
      );
      assertEquals(
        await code(q.resendDead("1700000000000-000001-0a0b0c0d", {})),
        "404 not_found",
      );

      // As it was: the same object, a new message; delivered once the destination takes it.
      refuse = false;
      const again = await q.resendDead(id, {});
      assert(again !== id);
      assertEquals(await deadIds(), []);
      await waitFor(() => Promise.resolve(got.some((g) => g.id === again)), {
        timeoutMs: 15_000,
        description: "the big message sent again",
      });
      assertEquals(new Uint8Array(got.find((g) => g.id === again)!.bytes), big);

      // Edited: a small dead letter given a body over nats_max_payload, and a content type.
      refuse = true;
      const small = await q.accept(request("small"));
      await waitFor(async () => (await deadIds()).includes(small), {
        timeoutMs: 15_000,
        description: "the small message dead",
      });
      const inline = await q.deadContent(small, 1 << 20);
      assertEquals(JSON.parse(new TextDecoder().decode(inline.body)), { n: "small" });
      refuse = false;
      const edited = crypto.getRandomValues(new Uint8Array(20_000));
      const fresh = await q.resendDead(small, { body: edited, content_type: "application/dicom" });
      await waitFor(() => Promise.resolve(got.some((g) => g.id === fresh)), {
        timeoutMs: 15_000,
        description: "the edited message delivered",
      });
      const sent = got.find((g) => g.id === fresh)!;
      assertEquals(new Uint8Array(sent.bytes), edited);
      assertEquals(sent.type, "application/dicom");
      assertEquals(await deadIds(), []);
      assertEquals(await code(q.resendDead(small, {})), "404 not_found");
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name: "nats queue: a message held by a gateway that closes is delivered by another",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const seenA: Seen[] = [];
    const seenB: Seen[] = [];
    const cfg = config(c, { ordering: "fifo" });
    // A never finishes an attempt (its destination hangs) until it closes.
    const a = await NatsQueue.open(
      "api",
      cfg,
      {
        ...deps(() => 201, seenA, { attemptTimeoutMs: 60_000 }),
        deliver: (_req, signal) =>
          new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
      },
    );
    const id = await a.accept(request("held"));
    await waitFor(() => Promise.resolve(a.stats().in_flight === 1), {
      timeoutMs: 10_000,
      description: "A holding the message",
    });
    const b = await NatsQueue.open("api", cfg, deps(() => 201, seenB));
    try {
      await a.close();
      await waitFor(() => Promise.resolve(seenB.some((s) => s.id === id)), {
        timeoutMs: 15_000,
        description: "B delivering the message A gave back",
      });
    } finally {
      await b.close();
    }
  },
});

Deno.test({
  name: "nats queue: wrong credentials leave the queue degraded with 503, never crash",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const degraded: string[] = [];
    const q = await NatsQueue.open(
      "api",
      config(c, { nats_password: "wrong", nats_timeout_secs: 2 }),
      deps(() => 201, [], {
        health: { degraded: (_c, why) => degraded.push(why), recovered: () => {} },
      }),
    );
    try {
      assert(degraded.length > 0);
      assert(!degraded.join(" ").includes("wrong"), "the password is never in a reason");
      let status = 0;
      await q.accept(request(1)).catch((e) => status = e.status);
      assertEquals(status, 503);
      assert(q.stats().degraded !== null);
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name:
    "nats queue: TLS with a client certificate, and an NKey seed file, against servers that require them",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const dir = await tempDir("gw-nats-tls-");
    const ca = await makeTestCa(dir);
    const server = await ca.server("nats", ["127.0.0.1", "localhost"]);
    const client = await ca.client("gateway", "gateway");
    const user = nkeys.createUser();
    const seed = new TextDecoder().decode(user.getSeed());
    await Deno.writeTextFile(`${dir}/gateway.nk`, `# the gateway's NKey\n${seed}\n`);
    await using tls = await startNats({
      auth: { nkey: user.getPublicKey() },
      tls: {
        certPath: server.certPath,
        keyPath: server.keyPath,
        caPath: ca.certPath,
        verify: true,
      },
      client: {
        authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)),
        tls: {
          caFile: ca.certPath,
          certFile: client.certPath,
          keyFile: client.keyPath,
        },
      },
    });
    const seen: Seen[] = [];
    const base = {
      ...config(tls, {
        nats_replicas: 1,
        nats_user: undefined,
        nats_password: undefined,
        nats_nkey_file: `${dir}/gateway.nk`,
        nats_ca_path: ca.certPath,
        nats_cert_path: client.certPath,
        nats_key_path: client.keyPath,
      }),
    };
    base.nats_servers = tls.servers.map((u) => u.replace("nats://", "tls://"));
    const q = await NatsQueue.open("api", base, deps(() => 201, seen));
    try {
      assertEquals(q.stats().degraded, null);
      const id = await q.accept(request("tls"));
      await waitFor(() => Promise.resolve(seen.some((x) => x.id === id)), {
        timeoutMs: 15_000,
        description: "delivered over TLS",
      });
    } finally {
      await q.close();
    }
    // Without the client certificate the server refuses: degraded, 503, not a crash.
    const refused = await NatsQueue.open(
      "api",
      { ...base, nats_cert_path: undefined, nats_key_path: undefined, nats_timeout_secs: 2 },
      deps(() => 201, []),
    );
    try {
      let status = 0;
      await refused.accept(request(2)).catch((e) => status = e.status);
      assertEquals(status, 503);
    } finally {
      await refused.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "nats queue: a full stream refuses with 503 queue_full; a reload's new limits reach JetStream",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const cfg = config(c, { max_messages: 2 });
    // The destination is down: the messages stay in the stream.
    const d = deps(() => 0, []);
    const q = await NatsQueue.open("api", cfg, d);
    try {
      await q.accept(request(1));
      await q.accept(request(2));
      let refused: GatewayError | undefined;
      await q.accept(request(3)).catch((e) => refused = e);
      assertEquals(refused?.status, 503);
      assertEquals(refused?.code, "queue_full");
      assertEquals(refused?.headers?.["retry-after"], "30");
      q.retune({ ...cfg, max_messages: 3 }, d);
      const nc = await connect(c.clientOptions());
      try {
        const jsm = await nc.jetstreamManager();
        await waitFor(
          async () => (await jsm.streams.info(cfg.nats_stream!)).config.max_msgs === 3,
          { timeoutMs: 10_000, description: "the stream's new max_msgs" },
        );
      } finally {
        await nc.close();
      }
      await q.accept(request(3));
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name:
    "nats queue: a body of exactly nats_max_payload (1 MiB, the servers' max_payload) still fits: its header goes with it",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    const c = await theCluster();
    const got: Uint8Array[] = [];
    const base = deps(() => 201, []);
    const q = await NatsQueue.open("api", config(c, { nats_max_payload: undefined }), {
      ...base,
      deliver: async (r, signal) => {
        got.push(new Uint8Array(await r.body.bytes()));
        return await base.deliver(r, signal);
      },
    });
    try {
      const body = crypto.getRandomValues(new Uint8Array(65_536)).slice();
      const mib = new Uint8Array(1_048_576);
      for (let at = 0; at < mib.length; at += body.length) mib.set(body, at);
      await q.accept(request("mib", mib));
      await waitFor(() => Promise.resolve(got.length === 1), {
        timeoutMs: 15_000,
        description: "the 1 MiB message delivered",
      });
      assertEquals(got[0], mib);
    } finally {
      await q.close();
    }
  },
});

Deno.test({
  name: "nats queue: stop the cluster",
  ignore: !HAVE,
  ...options,
  fn: async () => {
    await cluster?.stop();
  },
});

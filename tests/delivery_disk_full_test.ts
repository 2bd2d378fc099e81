/**
 * A delivery queue on a filesystem that fills up (a 1 MiB tmpfs mounted by the test): new messages
 * are refused at once with 507 `queue_full`, nothing half-written stays, what was accepted is
 * intact and delivered, and messages are accepted again once delivery frees the space. Writes in
 * the background (a dead letter, a `.state` note, the directory at start) that the full disk
 * refuses pause the queue (507 for new messages, a log line, `gateway_component_degraded`,
 * `/readyz`), never the gateway, and the queue resumes by itself once the disk has room. Notes
 * whose message is gone are removed at start.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ECHO_PIPELINE, startTestGateway, startUpstream, type TestGateway } from "./harness.ts";
import {
  type Filler,
  fillFilesystem,
  freePort,
  isCi,
  mountSmallFilesystem,
  startGateway,
  waitFor,
} from "./support/mod.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";
import { readMessage } from "../gateway/delivery/mod.ts";

Deno.test({
  name: "delivery: a full disk refuses new messages at once (507), keeps the rest whole, recovers",
  // Mounting needs root (CI runs as root); elsewhere the test is skipped, in CI it must run.
  ignore: Deno.uid() !== 0 && !isCi(),
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    let up = false;
    let delivered = 0;
    const upstream = startUpstream((_req, body) => {
      if (!up) return new Response("down", { status: 503 });
      delivered += body.length > 0 ? 1 : 0;
      return new Response("ok");
    });
    const gw = await startTestGateway(
      `
[endpoints.in]
service = "http"
[endpoints.in.options]
path_prefix = "/in"
[backends.out]
service = "http"
[backends.out.options]
base_url = "${upstream.url}"
[backends.out.queue]
dir = "${small.dir}/queue"
ordering = "parallel"
initial_backoff_ms = 50
max_backoff_ms = 100
` + `
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`,
    );
    try {
      const body = new Uint8Array(64 * 1024).fill(0x42);
      let accepted = 0;
      let refusal: { status: number; code: string } | undefined;
      for (let i = 0; i < 40 && !refusal; i++) {
        const res = await fetch(`${gw.url}/in/x`, { method: "POST", body });
        const answer = await res.json();
        if (res.status === 202) accepted++;
        else refusal = { status: res.status, code: answer.error.code };
      }
      assert(refusal, "the disk filled up");
      assertEquals([refusal.status, refusal.code], [507, "queue_full"]);
      // At once: refused as soon as the disk refuses a write, not after the rest of the body (nor
      // a wait for room). The next message is bigger than the whole disk; the client sends it in
      // 64 KiB chunks and holds back its end until an answer has come, so the 507 can only come
      // before the end of the body. An order of events, not a duration: a gateway that waited for
      // the whole body never answers (the hang guard, 60 s, ends only that).
      let sent = 0;
      let ended = false;
      let release = () => {};
      const held = new Promise<void>((resolve) => release = resolve);
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent < 2 * 1024 * 1024) {
            controller.enqueue(body.slice());
            sent += body.length;
            return;
          }
          await held; // the end of the body waits for the answer
          ended = true;
          controller.close();
        },
      });
      let guard: ReturnType<typeof setTimeout> | undefined;
      const hang = new Promise<never>((_, reject) => {
        guard = setTimeout(
          () => reject(new Error("hang guard (60 s): no answer while the body was held open")),
          60_000,
        );
      });
      try {
        const res = await Promise.race([
          fetch(`${gw.url}/in/x`, { method: "POST", body: stream }),
          hang,
        ]);
        const endedBeforeAnswer = ended;
        release();
        const answer = await res.json();
        assertEquals([res.status, answer.error.code], [507, "queue_full"]);
        assert(!endedBeforeAnswer, "the 507 came before the end of the body");
        assert(sent <= 2 * 1024 * 1024, `${sent} bytes sent`);
      } finally {
        release();
        clearTimeout(guard);
      }
      assert(accepted >= 5, `${accepted} accepted before the disk was full`);
      const tmp = [...Deno.readDirSync(`${small.dir}/queue/tmp`)];
      assertEquals(tmp, [], "nothing half-written");
      let whole = 0;
      for (const e of Deno.readDirSync(`${small.dir}/queue/ready`)) {
        if (!e.name.endsWith(".msg")) continue;
        await readMessage(`${small.dir}/queue/ready/${e.name}`);
        whole++;
      }
      assertEquals(whole, accepted);

      // The destination comes back: the queue drains, and the space is there again.
      up = true;
      await waitFor(() => Promise.resolve(delivered === accepted), {
        timeoutMs: 10_000,
        description: "everything accepted delivered",
      });
      const again = await fetch(`${gw.url}/in/x`, { method: "POST", body });
      assertEquals(again.status, 202);
      await again.body?.cancel();
    } finally {
      await gw.stop();
      await upstream.stop();
      await small.unmount();
    }
  },
});

// --- Background writes on a full disk: the queue degrades, the gateway stays up -----------------

/** Mounting needs root (CI runs as root); elsewhere these tests are skipped, in CI they must run. */
const NO_MOUNT = Deno.uid() !== 0 && !isCi();

/** An echo pipeline under /echo and a queued pipeline under /in (fifo, quick retries). */
function queuedToml(upstream: string, queueDir: string): string {
  return ECHO_PIPELINE + `
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
initial_backoff_ms = 50
max_backoff_ms = 200
[pipelines.p]
endpoints = ["in"]
backends = ["out"]
`;
}

/** The queue of backend `out`, as `GET /admin/queues` reports it. */
async function queueOut(
  mgmtFetch: (path: string) => Promise<Response>,
): Promise<{ depth: number; dead: number; degraded: { reason: string } | null }> {
  const res = await mgmtFetch("/admin/queues");
  const queues = (await res.json()).queues as { backend: string }[];
  return queues.find((q) => q.backend === "out") as never;
}

/** Log lines (JSON) with this message. */
function logged(logs: string[], msg: string): Record<string, unknown>[] {
  return logs.map((l) => JSON.parse(l)).filter((l) => l.msg === msg);
}

/** The gauge `gateway_component_degraded{component}` now. */
async function degradedGauge(
  mgmtFetch: (path: string) => Promise<Response>,
  component: string,
): Promise<number | undefined> {
  const text = await (await mgmtFetch("/metrics")).text();
  return sampleValue(parseExposition(text), "gateway_component_degraded", { component });
}

/**
 * Files of a queue sub-directory, with their sizes; without the temporary files of a note being
 * written right now (`….tmp`, gone when the write ends: {@link noLeftovers} checks that).
 */
function filesOf(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of Deno.readDirSync(dir)) {
    if (e.name.endsWith(".tmp")) continue;
    try {
      out[e.name] = Deno.statSync(`${dir}/${e.name}`).size;
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

/** No temporary file anywhere in the queue directory (call when the queue is idle). */
function noLeftovers(queueDir: string): void {
  const left: string[] = [];
  for (const sub of ["", "/tmp", "/ready", "/dead"]) {
    for (const e of Deno.readDirSync(`${queueDir}${sub}`)) {
      if (e.isFile && (e.name.endsWith(".tmp") || e.name.startsWith(".queue-probe"))) {
        left.push(`${sub}/${e.name}`);
      }
    }
  }
  assertEquals(left, [], "no temporary file left behind");
}

Deno.test({
  name: "delivery: a dead letter on a full disk pauses the queue, not the gateway; written later",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    const release = Promise.withResolvers<void>();
    const upstream = startUpstream(async () => {
      await release.promise;
      return new Response("refused: unknown patient", { status: 400 });
    });
    const queueDir = `${small.dir}/queue`;
    const gw = await startTestGateway(queuedToml(upstream.url, queueDir));
    let filler: Filler | undefined;
    try {
      const res = await fetch(`${gw.url}/in/x`, { method: "POST", body: "a message" });
      assertEquals(res.status, 202);
      const id = (await res.json()).delivery_id as string;
      // The destination has the message; the disk fills up before it answers 400.
      await waitFor(() => Promise.resolve(upstream.received.length === 1), {
        timeoutMs: 10_000,
        description: "the delivery attempt",
      });
      filler = await fillFilesystem(small.dir);
      release.resolve();

      await waitFor(async () => (await queueOut(gw.mgmtFetch)).degraded !== null, {
        timeoutMs: 10_000,
        description: "the queue reported degraded",
      });
      const q = await queueOut(gw.mgmtFetch);
      assertMatch(q.degraded!.reason, /dead letter .* cannot be written: ENOSPC/);
      assertEquals([q.depth, q.dead], [1, 0], "the message waits in ready/");
      // The gateway serves on: the other pipeline answers, the queued one refuses at once.
      const echo = await fetch(`${gw.url}/echo/ping`, { method: "POST", body: "hi" });
      assertEquals(echo.status, 200);
      await echo.body?.cancel();
      const refused = await fetch(`${gw.url}/in/x`, { method: "POST", body: "another" });
      assertEquals(refused.status, 507);
      assertEquals((await refused.json()).error.code, "queue_full");
      assertEquals(refused.headers.get("retry-after"), "30");
      // A status check shows it: /readyz stays ready (the rest works) and names the component.
      const ready = await fetch(`${gw.mgmt}/readyz`);
      assertEquals(ready.status, 200);
      const readyBody = await ready.json();
      assertEquals(readyBody.status, "ready");
      assertEquals(readyBody.degraded.map((d: { component: string }) => d.component), [
        "queue/out",
      ]);
      assertEquals(await degradedGauge(gw.mgmtFetch, "queue/out"), 1);
      // Nothing half-written: no empty dead letter, nothing in tmp/.
      assertEquals(filesOf(`${queueDir}/dead`), {});
      assertEquals(filesOf(`${queueDir}/tmp`), {});
      await readMessage(`${queueDir}/ready/${id}.msg`);

      // Space again: the probe writes the dead letter and the queue resumes by itself.
      await filler.free();
      filler = undefined;
      await waitFor(async () => {
        const now = await queueOut(gw.mgmtFetch);
        return now.degraded === null && now.dead === 1;
      }, { timeoutMs: 10_000, description: "the dead letter written after the disk had room" });
      const why = JSON.parse(await Deno.readTextFile(`${queueDir}/dead/${id}.json`));
      assertEquals([why.reason, why.status, why.answer], [
        "HTTP 400",
        400,
        "refused: unknown patient",
      ]);
      await readMessage(`${queueDir}/dead/${id}.msg`);
      assertEquals(filesOf(`${queueDir}/ready`), {});
      assertEquals(upstream.received.length, 1, "a message refused for good is not sent again");
      noLeftovers(queueDir);
      assertEquals(await degradedGauge(gw.mgmtFetch, "queue/out"), 0);
      assertEquals(logged(gw.logs, "component degraded").length, 1, "logged once");
      assertEquals(logged(gw.logs, "component recovered").length, 1);
      const again = await fetch(`${gw.url}/in/x`, { method: "POST", body: "accepted again" });
      assertEquals(again.status, 202);
      await again.body?.cancel();
    } finally {
      release.resolve();
      await filler?.free();
      await gw.stop();
      await upstream.stop();
      await small.unmount();
    }
  },
});

Deno.test({
  name: "delivery: a .state note on a full disk pauses the queue once; no empty note; resumes",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    const release = Promise.withResolvers<void>();
    let up = false;
    const upstream = startUpstream(async () => {
      await release.promise;
      return up ? new Response("ok") : new Response("busy", { status: 503 });
    });
    const queueDir = `${small.dir}/queue`;
    const gw = await startTestGateway(queuedToml(upstream.url, queueDir));
    let filler: Filler | undefined;
    try {
      const res = await fetch(`${gw.url}/in/x`, { method: "POST", body: "a message" });
      assertEquals(res.status, 202);
      const id = (await res.json()).delivery_id as string;
      await waitFor(() => Promise.resolve(upstream.received.length === 1), {
        timeoutMs: 10_000,
        description: "the first delivery attempt",
      });
      filler = await fillFilesystem(small.dir);
      release.resolve();
      // Several failed attempts, each with a note the disk refuses.
      await waitFor(() => Promise.resolve(upstream.received.length >= 4), {
        timeoutMs: 10_000,
        description: "attempts retried while the disk is full",
      });
      const q = await queueOut(gw.mgmtFetch);
      assertMatch(q.degraded?.reason ?? "", /attempts of message .* cannot be noted: ENOSPC/);
      assertEquals(logged(gw.logs, "component degraded").length, 1, "once, not per attempt");
      // Never an empty or cut note where the old one was.
      const notes = filesOf(`${queueDir}/ready`);
      assertEquals(Object.keys(notes).filter((n) => n.endsWith(".state")), []);
      assertEquals(filesOf(`${queueDir}/tmp`), {});

      await filler.free();
      filler = undefined;
      await waitFor(async () => (await queueOut(gw.mgmtFetch)).degraded === null, {
        timeoutMs: 10_000,
        description: "the queue resumed once the disk had room",
      });
      const state = JSON.parse(await Deno.readTextFile(`${queueDir}/ready/${id}.state`));
      assert(state.attempts >= 1, `attempts noted: ${JSON.stringify(state)}`);
      assertEquals(state.last_error, "HTTP 503");
      up = true;
      await waitFor(async () => (await queueOut(gw.mgmtFetch)).depth === 0, {
        timeoutMs: 10_000,
        description: "delivered",
      });
      // A delivered message's files go just after it counts as delivered (off the event loop).
      await waitFor(() => Promise.resolve(Object.keys(filesOf(`${queueDir}/ready`)).length === 0), {
        timeoutMs: 10_000,
        description: "the delivered message's files removed",
      }).catch(() => {});
      assertEquals(filesOf(`${queueDir}/ready`), {});
      noLeftovers(queueDir);
      assertEquals(logged(gw.logs, "component recovered").length, 1);
    } finally {
      release.resolve();
      await filler?.free();
      await gw.stop();
      await upstream.stop();
      await small.unmount();
    }
  },
});

Deno.test({
  name: "delivery: no inode left for a new message is 507 queue_full, nothing half-written",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024, { inodes: 64 });
    if ("reason" in small) throw new Error(small.reason);
    const upstream = startUpstream(() => new Response("down", { status: 503 }));
    const queueDir = `${small.dir}/queue`;
    const gw = await startTestGateway(queuedToml(upstream.url, queueDir));
    let filler: Filler | undefined;
    try {
      filler = await fillFilesystem(small.dir, "inodes");
      const res = await fetch(`${gw.url}/in/x`, { method: "POST", body: "a message" });
      const body = await res.json();
      assertEquals([res.status, body.error?.code], [507, "queue_full"]);
      assertEquals(filesOf(`${queueDir}/tmp`), {});
      assertEquals(filesOf(`${queueDir}/ready`), {});
      await filler.free();
      filler = undefined;
      const again = await fetch(`${gw.url}/in/x`, { method: "POST", body: "a message" });
      assertEquals(again.status, 202);
      await again.body?.cancel();
    } finally {
      await filler?.free();
      await gw.stop();
      await upstream.stop();
      await small.unmount();
    }
  },
});

Deno.test({
  name: "delivery: a gateway started where its queue directory cannot be made serves the rest",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024, { inodes: 64 });
    if ("reason" in small) throw new Error(small.reason);
    const upstream = startUpstream(() => new Response("ok"));
    let filler: Filler | undefined = await fillFilesystem(small.dir, "inodes");
    const queueDir = `${small.dir}/queue`;
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway(queuedToml(upstream.url, queueDir));
      const echo = await fetch(`${gw.url}/echo/ping`, { method: "POST", body: "hi" });
      assertEquals(echo.status, 200);
      await echo.body?.cancel();
      assertMatch((await queueOut(gw.mgmtFetch)).degraded?.reason ?? "", /cannot be read or made/);
      const refused = await fetch(`${gw.url}/in/x`, { method: "POST", body: "a message" });
      assertEquals(refused.status, 507);
      await refused.body?.cancel();
      await filler.free();
      filler = undefined;
      await waitFor(async () => (await queueOut(gw!.mgmtFetch)).degraded === null, {
        timeoutMs: 10_000,
        description: "the queue opened once the disk had room",
      });
      const res = await fetch(`${gw.url}/in/x`, { method: "POST", body: "a message" });
      assertEquals(res.status, 202);
      await res.body?.cancel();
      await waitFor(() => Promise.resolve(upstream.received.length === 1), {
        timeoutMs: 10_000,
        description: "delivered",
      });
    } finally {
      await filler?.free();
      await gw?.stop();
      await upstream.stop();
      await small.unmount();
    }
  },
});

/** A gateway process config: an echo pipeline and the queued pipeline, on free ports. */
function processToml(port: number, mgmt: number, upstream: string, queueDir: string): string {
  return `
[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${mgmt}
[logging]
level = "info"
` + queuedToml(upstream, queueDir);
}

Deno.test({
  name: "delivery: a gateway restarted on a still-full disk starts, serves, and does not die",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    let refuse = false;
    const upstream = startUpstream(() =>
      refuse ? new Response("refused", { status: 400 }) : new Response("down", { status: 503 })
    );
    const queueDir = `${small.dir}/queue`;
    let filler: Filler | undefined;
    try {
      // A message waits (its destination is down) when the gateway stops.
      let port = freePort();
      const first = await startGateway({
        configText: processToml(port, freePort(), upstream.url, queueDir),
      });
      let id: string;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/in/x`, { method: "POST", body: "m" });
        assertEquals(res.status, 202);
        id = (await res.json()).delivery_id;
      } finally {
        await first.stop();
      }
      // What an earlier crash on this disk left: an empty dead letter note of the waiting
      // message, and the note of a message that is gone (empty too: removing them at start
      // frees no space on the full disk).
      await Deno.writeTextFile(`${queueDir}/dead/${id}.json`, "");
      await Deno.writeTextFile(`${queueDir}/ready/0000000000001-000001-00000000.state`, "");
      filler = await fillFilesystem(small.dir);
      refuse = true;

      port = freePort();
      const gw = await startGateway({
        configText: processToml(port, freePort(), upstream.url, queueDir),
      });
      try {
        await waitFor(async () => (await queueOut(gw.mgmtFetch)).degraded !== null, {
          timeoutMs: 15_000,
          description: "the dead letter refused by the full disk",
        }).catch(async (err) => {
          console.log(JSON.stringify(await queueOut(gw.mgmtFetch)), upstream.received.length);
          console.log(gw.output());
          throw err;
        });
        // Alive and serving a while later: the attempt that failed did not take it down.
        for (let i = 0; i < 3; i++) {
          const echo = await fetch(`http://127.0.0.1:${port}/echo/ping`, {
            method: "POST",
            body: "hi",
          });
          assertEquals(echo.status, 200);
          await echo.body?.cancel();
          const q = await queueOut(gw.mgmtFetch);
          assert(q.degraded !== null, "still degraded, still up");
        }
        const refused = await fetch(`http://127.0.0.1:${port}/in/x`, { method: "POST", body: "m" });
        assertEquals(refused.status, 507);
        await refused.body?.cancel();
        const ready = filesOf(`${queueDir}/ready`);
        assertEquals(Object.keys(ready).filter((n) => n.endsWith(".msg")), [`${id}.msg`]);
        assertEquals(Object.keys(ready).filter((n) => n.endsWith(".state")).length, 1);
        JSON.parse(await Deno.readTextFile(`${queueDir}/ready/${id}.state`));
        assertEquals(filesOf(`${queueDir}/dead`), {}, "the empty note was removed at start");

        await filler.free();
        filler = undefined;
        await waitFor(async () => {
          const q = await queueOut(gw.mgmtFetch);
          return q.degraded === null && q.dead === 1;
        }, { timeoutMs: 15_000, description: "the dead letter written after the disk had room" });
        const why = JSON.parse(await Deno.readTextFile(`${queueDir}/dead/${id}.json`));
        assertEquals(why.reason, "HTTP 400");
        noLeftovers(queueDir);
        assertMatch(gw.output(), /removed notes whose message is gone/);
      } finally {
        await gw.stop();
      }
    } finally {
      await filler?.free();
      await upstream.stop();
      await small.unmount();
    }
  },
});

Deno.test("delivery: notes whose message is gone are removed at start, and counted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-orphans-" });
  for (const sub of ["tmp", "ready", "dead"]) await Deno.mkdir(`${dir}/${sub}`);
  // kill -9 during a delivery: the message was removed, its attempts note was not.
  await Deno.writeTextFile(`${dir}/ready/1700000000000-000001-0a0b0c0d.state`, '{"attempts":2}');
  // kill -9 while dead-lettering: the note was written, the message still waits (here: gone).
  await Deno.writeTextFile(`${dir}/dead/1700000000000-000002-0a0b0c0d.json`, "");
  const upstream = startUpstream(() => new Response("ok"));
  const gw = await startTestGateway(queuedToml(upstream.url, dir));
  try {
    assertEquals(filesOf(`${dir}/ready`), {});
    assertEquals(filesOf(`${dir}/dead`), {});
    const line = logged(gw.logs, "queue: removed notes whose message is gone")[0];
    assertEquals([line?.backend, line?.state_files, line?.dead_letter_notes], ["out", 1, 1]);
  } finally {
    await gw.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The association pool of the dicom_scu backend against DCMTK peers we did not write: `storescp`
 * and `dcmqrscp` in verbose mode, whose logs name every association they accept and release. A
 * gateway in this process (one data-plane isolate, so that HTTP and DIMSE traffic share one pool)
 * forwards C-STOREs received by its dicom_scp endpoint, directly or through a delivery queue, and
 * answers C-ECHO and C-FIND over HTTP; its metrics count the associations opened and reused.
 */
import { type GeneratedInstance, generateInstances } from "../fixtures/dicom/generate.ts";
import {
  DCMTK_ENV,
  type DicomPeer,
  startDcmqrscp,
  startStorescp,
} from "../fixtures/dicom/peers.ts";
import { parseP10 } from "../gateway/dicom/mod.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";
import { freePort, removeDir, requirePeer, runCommand, tempDir, waitFor } from "./support/mod.ts";

/** A dicom_scp endpoint and an http endpoint, both to the dicom_scu backend `pacs`. */
function gatewayToml(
  peer: DicomPeer,
  scpPort: number,
  options: string,
  queueDir?: string,
): string {
  const queue = queueDir ? `[backends.pacs.queue]\ndir = "${queueDir}"\n` : "";
  return `
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${scpPort}
enable_store = true
[endpoints.web]
service = "http"
[endpoints.web.options]
path_prefix = "/pacs"
[backends.pacs]
service = "dicom_scu"
timeout_secs = 20
[backends.pacs.options]
aet = "${peer.aet}"
host = "127.0.0.1"
port = ${peer.port}
local_aet = "GATEWAY_SCU"
${options}
${queue}
[pipelines.pacs]
endpoints = ["scp", "web"]
backends = ["pacs"]
`;
}

/** Lines of a peer's log matching `pattern`. */
function count(peer: DicomPeer, pattern: RegExp): number {
  return peer.process.output().match(new RegExp(pattern, "g"))?.length ?? 0;
}

/** Waits until `pattern` is logged `n` times by `peer` (its log comes through a pipe). */
async function logged(peer: DicomPeer, pattern: RegExp, n: number): Promise<void> {
  await waitFor(() => Promise.resolve(count(peer, pattern) >= n), {
    timeoutMs: 15_000,
    description: `${n} x ${pattern} in ${peer.aet}'s log`,
  });
}

/** A metric of the gateway for backend `pacs` (0 when absent). */
async function metric(
  gw: TestGateway,
  name: string,
  labels: Record<string, string> = { backend: "pacs" },
): Promise<number> {
  const text = await (await gw.mgmtFetch("/metrics")).text();
  return sampleValue(parseExposition(text), name, labels) ?? 0;
}

async function storescu(port: number, files: string[]): Promise<void> {
  const r = await runCommand(
    "storescu",
    ["-aet", "MODALITY", "-aec", "GWSCP", "127.0.0.1", String(port), ...files],
    { timeoutMs: 30_000, env: DCMTK_ENV },
  );
  assertEquals(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert(!/Refused|Failed|Error/i.test(r.stdout + r.stderr), r.stdout + r.stderr);
}

/** Every instance is in storescp's directory with the dataset it was sent with. */
async function assertReceived(peer: DicomPeer, instances: GeneratedInstance[]): Promise<void> {
  const names = new Map<string, string>();
  for await (const e of Deno.readDir(peer.dir)) names.set(e.name.replace(/^[A-Z]+\./, ""), e.name);
  for (const i of instances) {
    const name = names.get(i.sopInstanceUid);
    assert(name, `storescp received no ${i.sopInstanceUid}`);
    const got = parseP10(await Deno.readFile(`${peer.dir}/${name}`));
    const sent = parseP10(await Deno.readFile(i.path));
    assertEquals(got.meta.transferSyntax, sent.meta.transferSyntax);
    assertEquals(got.dataset, sent.dataset, `the dataset of ${i.sopInstanceUid}`);
  }
}

/** Child processes of `pid` (dcmqrscp serves each association in a forked child). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) {
        out.push(Number(entry.name));
      }
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** An association accepted (storescp also says "Received" of a bare TCP probe). */
const ACCEPTED = /Association Acknowledged/;
const RELEASED = /Association Release/;

Deno.test({
  name:
    "dicom_scu pool with storescp: many C-STOREs and a C-ECHO over one association, idle release, A-RELEASE at reload and stop, the same bytes",
  ignore: !requirePeer("storescp", "storescp", "dcmtk") ||
    !requirePeer("storescu", "storescu", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-scu-pool-");
    const instances = await generateInstances(`${dir}/in`, {
      seriesPerStudy: 2,
      instancesPerSeries: 3,
      size: 64,
    });
    const pacs = await startStorescp({ aet: "PACS", args: ["-v"] });
    try {
      const scpPort = freePort();
      const gw = await startTestGateway(
        gatewayToml(pacs, scpPort, "association_idle_secs = 2"),
        { workers: 1 },
      );
      try {
        await t.step("six C-STOREs from three senders and a C-ECHO: one association", async () => {
          // Each storescu run is an association of its own into the gateway, each instance an
          // operation of the backend.
          await storescu(scpPort, instances.slice(0, 2).map((i) => i.path));
          const echo = await fetch(`${gw.url}/pacs/echo`);
          assertEquals(echo.status, 200, await echo.text());
          await storescu(scpPort, instances.slice(2, 4).map((i) => i.path));
          await storescu(scpPort, instances.slice(4).map((i) => i.path));
          // The first association proposed CT Image Storage only: the C-ECHO needed a second one,
          // which proposed both and served the rest.
          assertEquals(await metric(gw, "gateway_dimse_associations_opened_total"), 2);
          assertEquals(await metric(gw, "gateway_dimse_associations_reused_total"), 5);
          await logged(pacs, ACCEPTED, 2);
          assertEquals(count(pacs, ACCEPTED), 2, pacs.process.output());
          await assertReceived(pacs, instances);
        });

        await t.step("an association unused for association_idle_secs is released", async () => {
          await logged(pacs, RELEASED, 2);
          await waitFor(
            async () => await metric(gw, "gateway_dimse_associations_open") === 0,
            { timeoutMs: 5000, description: "no association open" },
          );
          assertEquals(await metric(gw, "gateway_dimse_associations_idle"), 0);
        });
      } finally {
        await gw.stop();
      }

      await t.step(
        "a reload and the gateway's stop release idle associations (A-RELEASE)",
        async () => {
          const port = freePort();
          const kept = await startTestGateway(
            gatewayToml(pacs, port, "association_idle_secs = 3600"),
            { workers: 1 },
          );
          try {
            await storescu(port, [instances[0].path]);
            await logged(pacs, ACCEPTED, 3);
            assertEquals(await metric(kept, "gateway_dimse_associations_idle"), 1);
            assertEquals(count(pacs, RELEASED), 2, "kept, not released");
            // The configuration that took over has a pool of its own; the retired one releases.
            await kept.writeConfig(gatewayToml(pacs, port, "association_idle_secs = 3599"));
            const reload = await kept.mgmtFetch("/api/reload", { method: "POST" });
            assertEquals(reload.status, 200, await reload.text());
            await logged(pacs, RELEASED, 3);
            await storescu(port, [instances[1].path]);
            await logged(pacs, ACCEPTED, 4);
            assertEquals(count(pacs, RELEASED), 3, "the new association kept");
          } finally {
            await kept.stop();
          }
          await logged(pacs, RELEASED, 4);
          assertEquals(count(pacs, /Association Aborted/), 0, pacs.process.output());
        },
      );
    } finally {
      await pacs.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name:
    "dicom_scu pool: a storescp that aborts an idle association; the next C-STORE opens another",
  ignore: !requirePeer("storescp", "storescp", "dcmtk") ||
    !requirePeer("storescu", "storescu", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await tempDir("dicom-scu-pool-abort-");
    const instances = await generateInstances(`${dir}/in`, { instancesPerSeries: 2, size: 32 });
    // -ts 1: storescp aborts an association that sends nothing for a second.
    const pacs = await startStorescp({ aet: "PACS", args: ["-v", "-ts", "1"] });
    const scpPort = freePort();
    const gw = await startTestGateway(
      gatewayToml(pacs, scpPort, "association_idle_secs = 60"),
      { workers: 1 },
    );
    try {
      await storescu(scpPort, [instances[0].path]);
      await logged(pacs, /Association Aborted/, 1);
      await waitFor(
        async () => await metric(gw, "gateway_dimse_associations_open") === 0,
        { timeoutMs: 5000, description: "the aborted association dropped" },
      );
      await storescu(scpPort, [instances[1].path]);
      assertEquals(await metric(gw, "gateway_dimse_associations_opened_total"), 2);
      await assertReceived(pacs, instances);
    } finally {
      await gw.stop();
      await pacs.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name:
    "dicom_scu pool with dcmqrscp: max_associations holds six concurrent C-FINDs to two associations; a query whose association breaks is sent again",
  ignore: !requirePeer("dcmqrscp", "dcmqrscp", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-scu-pool-max-");
    const seeded = await generateInstances(`${dir}/seed`, { studies: 2, instancesPerSeries: 1 });
    const qr = await startDcmqrscp(seeded.map((i) => i.path), { args: ["-v"] });
    const gw = await startTestGateway(
      gatewayToml(qr, freePort(), "association_idle_secs = 60\nmax_associations = 2"),
      { workers: 1 },
    );
    const studies = async () => {
      const res = await fetch(`${gw.url}/pacs/studies`);
      const body = await res.text();
      assertEquals(res.status, 200, body);
      assertEquals((JSON.parse(body) as unknown[]).length, 2);
    };
    try {
      await t.step("six at once while dcmqrscp is stopped: two associations", async () => {
        // Stopped, dcmqrscp answers no association: every query is inside the gateway at once.
        Deno.kill(qr.process.child.pid, "SIGSTOP");
        let running: Promise<void>[];
        try {
          running = Array.from({ length: 6 }, () => studies());
          await waitFor(
            async () => await metric(gw, "gateway_requests_in_flight", { pipeline: "pacs" }) === 6,
            { timeoutMs: 10_000, description: "six queries in flight" },
          );
          assertEquals(await metric(gw, "gateway_dimse_associations_open"), 2);
        } finally {
          Deno.kill(qr.process.child.pid, "SIGCONT");
        }
        await Promise.all(running);
        assertEquals(await metric(gw, "gateway_dimse_associations_opened_total"), 2);
        assertEquals(await metric(gw, "gateway_dimse_associations_reused_total"), 4);
        await logged(qr, ACCEPTED, 2);
        assertEquals(count(qr, ACCEPTED), 2, qr.process.output());
      });

      await t.step("the association breaks under a query: sent again on a new one", async () => {
        const children = childrenOf(qr.process.child.pid);
        assertEquals(children.length, 2, "a dcmqrscp child per kept association");
        // The children hold the query unanswered, then go as a crashing PACS would.
        for (const pid of children) Deno.kill(pid, "SIGSTOP");
        const query = studies();
        await waitFor(
          async () => await metric(gw, "gateway_requests_in_flight", { pipeline: "pacs" }) === 1,
          { timeoutMs: 10_000, description: "the query in flight" },
        );
        for (const pid of children) Deno.kill(pid, "SIGKILL");
        await query;
        assertEquals(await metric(gw, "gateway_dimse_operations_retried_total"), 1);
        assertEquals(await metric(gw, "gateway_dimse_associations_opened_total"), 3);
      });
    } finally {
      await gw.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name:
    "dicom_scu pool: queued DIMSE delivery sends every message over one association, the same bytes",
  ignore: !requirePeer("storescp", "storescp", "dcmtk") ||
    !requirePeer("storescu", "storescu", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await tempDir("dicom-scu-pool-queue-");
    const instances = await generateInstances(`${dir}/in`, { instancesPerSeries: 5, size: 64 });
    const pacs = await startStorescp({ aet: "PACS", args: ["-v"] });
    const scpPort = freePort();
    const gw = await startTestGateway(
      gatewayToml(pacs, scpPort, "association_idle_secs = 60", `${dir}/queue`),
      { workers: 1 },
    );
    try {
      await storescu(scpPort, instances.map((i) => i.path));
      await waitFor(
        async () => await metric(gw, "gateway_queue_delivered_total") === instances.length,
        { timeoutMs: 15_000, description: "every message delivered" },
      );
      assertEquals(await metric(gw, "gateway_dimse_associations_opened_total"), 1);
      assertEquals(count(pacs, ACCEPTED), 1, pacs.process.output());
      await assertReceived(pacs, instances);
    } finally {
      await gw.stop();
      await pacs.stop();
      await removeDir(dir);
    }
  },
});

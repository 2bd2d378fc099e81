/**
 * The audit trail's syslog sink against Debian's rsyslog (imtcp with rsyslog-gnutls): RFC 5425
 * over mutual TLS, messages parsed by rsyslog as RFC 5424 with our structured data and the record
 * as in the trail file; rsyslog stopped (requests still answered at once, the sink degraded) and
 * started again (the queued records arrive); plain TCP and UDP; a full queue drops and counts.
 */
import { hostname } from "node:os";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { makeTestCa, removeDir, tempDir, waitFor } from "./support/mod.ts";
import { type CollectedMessage, requireRsyslog, startRsyslog } from "./support/rsyslog.ts";
import { Logger } from "../shared/mod.ts";
import { SyslogSink } from "../gateway/audit/syslog_sink.ts";
import type { AuditEntry } from "../gateway/audit/mod.ts";
import type { AuditSyslogConfig } from "../shared/gateway_config/mod.ts";
import { freePort } from "./support/mod.ts";

const HAS_RSYSLOG = requireRsyslog("audit syslog tests");

/** `[gateway@32473 k="v" ...]` as a map (values unescaped). */
function sdParams(sd: string): Record<string, string> {
  const m = /^\[gateway@32473((?: [a-z_]+="(?:[^"\\\]]|\\["\\\]])*")*)\]$/.exec(sd);
  assert(m, `not our structured data: ${sd}`);
  const out: Record<string, string> = {};
  for (const p of m[1].matchAll(/ ([a-z_]+)="((?:[^"\\\]]|\\["\\\]])*)"/g)) {
    out[p[1]] = p[2].replace(/\\(["\\\]])/g, "$1");
  }
  return out;
}

/** The record a message carries (its MSG, after the BOM). */
function recordOf(message: CollectedMessage): Record<string, unknown> {
  return JSON.parse(message.msg.replace(/^\s*\uFEFF?/, ""));
}

Deno.test({
  name: "audit syslog: RFC 5425 over mutual TLS to rsyslog; rsyslog stopped and started: " +
    "requests not held, the sink degraded, the queued records arrive",
  ignore: !HAS_RSYSLOG,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const certs = await tempDir("gw-syslog-certs-");
    try {
      const ca = await makeTestCa(certs);
      const server = await ca.server("collector", ["localhost", "127.0.0.1"]);
      const client = await ca.client("gateway", "gateway-node-a");
      await using rsyslog = await startRsyslog({
        tls: { cert: server, caPath: ca.certPath, requireClientCert: true },
      });
      const gw = await startTestGateway(`
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
backends = ["echo"]

[audit]
file = "{DIR}/audit/audit.jsonl"

[audit.syslog]
host = "127.0.0.1"
port = ${rsyslog.port}
ca_path = "${ca.certPath}"
cert_path = "${client.certPath}"
key_path = "${client.keyPath}"
app_name = "gw-test"
facility = "audit"
hostname = "node-a"
`);
      try {
        const get = async (i: number) => {
          const res = await fetch(`${gw.url}/api/item?n=${i}&token=secret-${i}`, {
            signal: AbortSignal.timeout(5_000),
          });
          await res.body?.cancel();
          return res.status;
        };
        for (let i = 0; i < 5; i++) assertEquals(await get(i), 200);
        await waitFor(async () => (await rsyslog.messages()).length >= 5, {
          timeoutMs: 20_000,
          description: "5 messages at rsyslog",
        });
        const messages = await rsyslog.messages();
        assertEquals(messages.length, 5);
        const trail = (await Deno.readTextFile(`${gw.dir}/audit/audit.jsonl`)).trim().split("\n")
          .map((l) => JSON.parse(l));
        for (const [i, m] of messages.entries()) {
          assertEquals(m.protocol_version, "1");
          assertEquals([m.app_name, m.hostname, m.msgid], ["gw-test", "node-a", "request"]);
          assertEquals(m.pri, String(13 * 8 + 6)); // facility audit, severity informational
          assertEquals(m.procid, String(Deno.pid));
          const sd = sdParams(m.structured_data);
          assertEquals(
            [sd.event, sd.status, sd.pipeline, sd.method, sd.outcome, sd.node],
            ["request", "200", "api", "GET", "success", hostname()],
          );
          // The record, as the trail file holds it (the file adds its chain: seq and prev).
          const { seq: _seq, prev: _prev, ...kept } = trail[i];
          assertEquals(recordOf(m), kept);
          assertEquals(sd.request_id, kept.request_id);
          assert(String(kept.query).includes("token=[redacted]"), String(kept.query));
        }

        await rsyslog.halt();
        // Requests are answered while the collector is away, their records still queued (an
        // answer that waited for delivery would not come before rsyslog is back); the sink is
        // degraded.
        for (let i = 5; i < 10; i++) assertEquals(await get(i), 200);
        const waiting = await (await gw.mgmtFetch("/metrics")).text();
        const depth = waiting.match(/gateway_audit_queue_depth\{sink="syslog"\} (\d+)/);
        assert(depth && Number(depth[1]) >= 1, `no syslog record waiting: ${depth?.[0]}`);
        assertEquals((await rsyslog.messages()).length, 5);
        await waitFor(
          () =>
            Promise.resolve(
              gw.gateway.degraded().some((d) => d.component === "audit.syslog"),
            ),
          { timeoutMs: 20_000, description: "the syslog sink marked degraded" },
        );
        await rsyslog.start();
        await waitFor(async () => (await rsyslog.messages()).length >= 10, {
          timeoutMs: 60_000,
          description: "the queued records at rsyslog after its restart",
        });
        const after = await rsyslog.messages();
        assertEquals(after.length, 10);
        assertEquals(
          after.map((m) => recordOf(m).query),
          Array.from({ length: 10 }, (_, i) => `?n=${i}&token=[redacted]`),
        );
        await waitFor(
          () => Promise.resolve(gw.gateway.degraded().length === 0),
          { timeoutMs: 10_000, description: "the syslog sink recovered" },
        );
        const metrics = await (await gw.mgmtFetch("/metrics")).text();
        assert(/gateway_audit_records_total\{sink="syslog"\} 10/.test(metrics), metrics);
      } finally {
        await gw.stop();
      }
    } finally {
      await removeDir(certs);
    }
  },
});

function entry(i: number): AuditEntry {
  return {
    event: "request",
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    request_id: `r-${i}`,
    method: "POST",
    path: `/fhir/Patient/${i}`,
    status: i % 2 ? 201 : 502,
    outcome: i % 2 ? "success" : "error",
    pipeline: 'p"x]',
  };
}

function sinkConfig(over: Partial<AuditSyslogConfig>): AuditSyslogConfig {
  return {
    host: "127.0.0.1",
    transport: "tcp",
    app_name: "gw",
    facility: "local3",
    queue_size: 100,
    connect_timeout_ms: 2_000,
    ...over,
  };
}

Deno.test({
  name: "audit syslog: plain TCP and UDP to rsyslog; SD values escaped; a gateway with syslog as " +
    "its only sink; a full queue drops " +
    "and counts, never waits",
  ignore: !HAS_RSYSLOG,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using rsyslog = await startRsyslog({ udp: true });
    const counts = { written: 0, lost: 0 };
    const report = {
      written: (n: number) => counts.written += n,
      lost: (n: number) => counts.lost += n,
      queued: () => {},
    };
    const logger = new Logger({ level: "error", format: "json", sink: () => {} });
    const tcp = await SyslogSink.open(
      sinkConfig({ port: rsyslog.port }),
      "node-b",
      { report, logger, baseDir: "/" },
    );
    const udp = await SyslogSink.open(
      sinkConfig({ port: rsyslog.udpPort, transport: "udp" }),
      "node-b",
      { report, logger, baseDir: "/" },
    );
    try {
      for (let i = 0; i < 4; i++) tcp.add(entry(i));
      udp.add(entry(100));
      await waitFor(async () => (await rsyslog.messages()).length >= 5, {
        timeoutMs: 20_000,
        description: "5 messages at rsyslog",
      });
      const messages = await rsyslog.messages();
      const byId = new Map(messages.map((m) => [String(recordOf(m).request_id), m]));
      for (const i of [0, 1, 2, 3, 100]) {
        const m = byId.get(`r-${i}`)!;
        assert(m, `r-${i} missing`);
        assertEquals(recordOf(m), { ...entry(i) });
        assertEquals(m.hostname, "node-b");
        // local3 = 19; error: notice (5), success: informational (6)
        assertEquals(m.pri, String(19 * 8 + (i % 2 ? 6 : 5)));
        assertEquals(m.timestamp.slice(0, 19), entry(i).time.slice(0, 19));
        assertEquals(sdParams(m.structured_data).pipeline, 'p"x]');
      }
      assertEquals(counts, { written: 5, lost: 0 });
    } finally {
      await tcp.close();
      await udp.close();
    }

    // A gateway whose only sink is syslog (no file): every request still gives its message.
    const gw = await startTestGateway(`
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
backends = ["echo"]

[audit]
source_name = "edge-7"

[audit.syslog]
host = "127.0.0.1"
port = ${rsyslog.port}
transport = "tcp"
`);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${gw.url}/api/only-syslog/${i}`);
        await res.body?.cancel();
        assertEquals(res.status, 200);
      }
      await waitFor(
        async () => (await rsyslog.messages()).filter((m) => m.hostname === "edge-7").length === 3,
        { timeoutMs: 20_000, description: "the syslog-only gateway's 3 messages" },
      );
      const mine = (await rsyslog.messages()).filter((m) => m.hostname === "edge-7");
      assertEquals(
        mine.map((m) => [m.app_name, m.pri, recordOf(m).path]),
        [0, 1, 2].map((i) => ["healthcare-gateway", String(10 * 8 + 6), `/api/only-syslog/${i}`]),
      );
    } finally {
      await gw.stop();
    }

    // A collector that is not there: records queue up to queue_size, the rest are counted.
    const nowhere = await SyslogSink.open(
      sinkConfig({ port: freePort(), queue_size: 3 }),
      "node-c",
      { report, logger, baseDir: "/" },
    );
    for (let i = 0; i < 5; i++) nowhere.add(entry(i));
    assertEquals(counts.lost, 2);
    await waitFor(() => Promise.resolve(nowhere.degraded), {
      timeoutMs: 10_000,
      description: "the sink degraded",
    });
    assertEquals(nowhere.length, 3);
    await nowhere.close();
    assertEquals(counts.lost, 5); // the three queued, unsent at stop
  },
});

Deno.test({
  name: "audit syslog: [audit.syslog] validation: cert and key together, TLS keys need tls",
  fn: async () => {
    const { validateConfigText } = await import("../shared/gateway_config/mod.ts");
    const problems = (text: string) =>
      validateConfigText(text, "gw.toml").problems.map((p) => `${p.path}: ${p.message}`);
    assertEquals(problems(`[audit.syslog]\nhost = "collector.example"\n`), []);
    const bad = problems(
      `[audit.syslog]\nhost = "collector.example"\ntransport = "udp"\ncert_path = "c.pem"\n`,
    );
    assert(bad.some((p) => p.startsWith("audit.syslog.key_path: missing")), bad.join("\n"));
    assert(bad.some((p) => p.startsWith("audit.syslog.cert_path: `cert_path` needs")));
    assert(
      problems(`[audit]\n`).some((p) => p.includes("[audit.syslog]")),
      "the no-sink message names the syslog sink",
    );
  },
});

/**
 * What the trail promises about keeping records: with `durability = "sync"` a record's promise
 * settles only once it is written and fdatasync'ed (one fdatasync for records that came together),
 * a record that cannot be kept is refused with 503 `audit_unavailable` and noted in the chain; in
 * every mode, a start that finds the run marker of an unclean stop writes a chained `audit.gap`
 * and logs an error, a clean stop removes the marker, and `verifyAuditFiles` lists the gaps.
 */
import { assert, assertEquals, assertMatch } from "../../tests/assert.ts";
import { Logger } from "../../shared/mod.ts";
import type { AuditConfig } from "../../shared/gateway_config/mod.ts";
import type { GatewayError } from "../errors.ts";
import { createMetrics } from "../observability/mod.ts";
import { AuditFile } from "./audit_file.ts";
import { verifyAuditFiles } from "./chain.ts";
import type { AuditEntry } from "./entry.ts";
import { markerPath, writeMarker } from "./run_marker.ts";
import { AuditTrail } from "./trail.ts";

function auditConfig(over: Partial<AuditConfig>): AuditConfig {
  return {
    max_file_bytes: 1 << 20,
    keep_files: 0,
    durability: "sync",
    group_commit_ms: 1,
    queue_size: 10_000,
    flush_interval_ms: 60_000,
    redact_query: [],
    fhir_batch_size: 100,
    ...over,
  };
}

function entry(id: string): AuditEntry {
  return { event: "request", time: new Date().toISOString(), request_id: id, status: 200 };
}

function setup() {
  const logs: Record<string, unknown>[] = [];
  const metrics = createMetrics();
  const trail = new AuditTrail({
    logger: new Logger({ level: "info", format: "json", sink: (l) => logs.push(JSON.parse(l)) }),
    metrics: metrics.audit,
  });
  return { trail, logs, metrics };
}

function readRecords(file: string): Record<string, unknown>[] {
  return Deno.readTextFileSync(file).trimEnd().split("\n").filter((l) => l).map((l) =>
    JSON.parse(l)
  );
}

/** Runs `fn` with `Deno.FsFile.prototype.syncData` replaced by `replacement(original)`. */
async function withSyncData<T>(
  replacement: (original: () => Promise<void>, file: Deno.FsFile) => Promise<void>,
  fn: () => Promise<T>,
): Promise<T> {
  const proto = Deno.FsFile.prototype;
  const original = proto.syncData;
  proto.syncData = function (this: Deno.FsFile) {
    return replacement(() => original.call(this), this);
  };
  try {
    return await fn();
  } finally {
    proto.syncData = original;
  }
}

Deno.test("audit trail (sync): a record's promise settles once it is written and fdatasync'ed, one fdatasync per batch", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/audit.jsonl`;
  const { trail } = setup();
  try {
    await trail.configure(auditConfig({ file }));
    assert(trail.durable);
    const synced: number[] = [];
    await withSyncData(async (original) => {
      await original();
      // What was on disk when this fdatasync returned.
      synced.push(readRecords(file).length);
    }, async () => {
      const seen: string[] = [];
      const waits = ["r1", "r2", "r3"].map((id) =>
        trail.add(entry(id))!.then(() => {
          // Released only with the record in the file.
          assert(readRecords(file).some((r) => r.request_id === id), `${id} not in the file`);
          seen.push(id);
        })
      );
      await Promise.all(waits);
      assertEquals(seen, ["r1", "r2", "r3"]);
      assertEquals(synced, [3], "the three records came together: one write, one fdatasync");
      await trail.add(entry("r4"));
      assertEquals(synced, [3, 4]);
    });
    assertEquals(readRecords(file).map((r) => r.seq), [1, 2, 3, 4]);
  } finally {
    await trail.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit trail (sync): a failed fdatasync refuses its records with 503, counted and noted in the chain", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/audit.jsonl`;
  const { trail, logs, metrics } = setup();
  try {
    await trail.configure(auditConfig({ file }));
    await trail.add(entry("before"));
    let fail = true;
    const outcomes = await withSyncData((original) => {
      if (!fail) return original();
      fail = false;
      return Promise.reject(new Error("Input/output error (os error 5)"));
    }, () =>
      Promise.all(
        ["lost-1", "lost-2"].map((id) =>
          trail.add(entry(id))!.then(() => undefined, (e) => e as GatewayError)
        ),
      ));
    for (const err of outcomes) {
      assertEquals([err?.status, err?.code], [503, "audit_unavailable"]);
    }
    // The failed batch was cut back off the file: no record says what was not kept.
    assertEquals(readRecords(file).map((r) => r.request_id), ["before"]);
    assertMatch(
      metrics.render(),
      /gateway_audit_dropped_total\{sink="file",reason="write_error"\} 2/,
    );
    assert(logs.some((l) => l.msg === "audit: records could not be written"));
    assert(logs.some((l) => l.msg === "audit: records were lost" && l.dropped === 2));
    // The disk is back: the loss is noted in the chain before the next record.
    await trail.add(entry("after"));
    const records = readRecords(file);
    assertEquals(records.map((r) => r.event), ["request", "audit.dropped", "request"]);
    assertEquals([records[1].dropped, records[1].reason], [2, "write_error"]);
    const report = await verifyAuditFiles([file]);
    assert(report.ok, report.lines.join("\n"));
    assertEquals(report.gaps, 1);
  } finally {
    await trail.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit trail (sync): a full queue refuses at once with 503 instead of losing silently", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/audit.jsonl`;
  const { trail, metrics } = setup();
  try {
    // A long gathering delay keeps the first record queued.
    await trail.configure(auditConfig({ file, queue_size: 1, group_commit_ms: 1000 }));
    const queued = trail.add(entry("q1"))!;
    const err = await trail.add(entry("q2"))!.then(() => undefined, (e) => e as GatewayError);
    assertEquals([err?.status, err?.code], [503, "audit_unavailable"]);
    assertMatch(
      metrics.render(),
      /gateway_audit_dropped_total\{sink="file",reason="queue_full"\} 1/,
    );
    await trail.flush();
    await queued;
  } finally {
    await trail.close();
    await Deno.remove(dir, { recursive: true });
  }
});

for (const durability of ["batched", "sync"] as const) {
  Deno.test(`audit trail: an unclean stop (${durability}) is an audit.gap at the next start, logged; a clean stop leaves no marker`, async () => {
    const dir = await Deno.makeTempDir();
    const file = `${dir}/audit.jsonl`;
    try {
      // What a run killed with -9 leaves: three records written, its marker still there.
      const killed = await AuditFile.open({
        path: file,
        maxFileBytes: 1 << 20,
        keepFiles: 0,
        logger: new Logger({ level: "error", format: "json", sink: () => {} }),
      });
      await killed.append([entry("a"), entry("b"), entry("c")]);
      await killed.close();
      await writeMarker(file, { pid: 4242, started: "2026-11-25T12:00:00.000Z", durability });
      const lastWrite = (await Deno.stat(file)).mtime!;

      const { trail, logs } = setup();
      await trail.configure(auditConfig({ file, durability: "batched" }));
      const records = readRecords(file);
      assertEquals(records.length, 4);
      const gap = records[3];
      assertEquals(
        [gap.seq, gap.event, gap.reason, gap.last_seq, gap.run_pid, gap.durability],
        [4, "audit.gap", "unclean_stop", 3, 4242, durability],
      );
      assertEquals(gap.run_started, "2026-11-25T12:00:00.000Z");
      assertEquals(gap.stopped_after, lastWrite.toISOString());
      const error = logs.find((l) =>
        l.level === "error" && String(l.msg).includes("did not stop cleanly")
      );
      assert(error, JSON.stringify(logs));
      assertEquals([error.last_seq, error.run_pid], [3, 4242]);
      // This run's marker, while it runs; verify reports it and does not read it as a chain.
      const marker = JSON.parse(await Deno.readTextFile(markerPath(file)));
      assertEquals([marker.pid, marker.durability], [Deno.pid, "batched"]);
      const running = await verifyAuditFiles([file, markerPath(file)]);
      assert(running.ok, running.lines.join("\n"));
      assertMatch(running.lines.join("\n"), /is writing this trail, or stopped uncleanly/);

      trail.add(entry("d"));
      await trail.close();
      await Deno.stat(markerPath(file)).then(
        () => assert(false, "the marker outlived a clean stop"),
        (err) => assert(err instanceof Deno.errors.NotFound),
      );
      const again = setup();
      await again.trail.configure(auditConfig({ file }));
      await again.trail.close();
      assertEquals(readRecords(file).map((r) => r.event), [
        "request",
        "request",
        "request",
        "audit.gap",
        "request",
      ]);
      assert(!again.logs.some((l) => l.level === "error"), "a clean stop is no gap");

      const report = await verifyAuditFiles([file]);
      assert(report.ok, report.lines.join("\n"));
      assertEquals(report.gaps, 1);
      const text = report.lines.join("\n");
      assertMatch(text, /5 records, seq 1-5, chain intact, 1 recorded gap/);
      assertMatch(text, /gap at seq 4: the gateway did not stop cleanly after seq 3/);
      assertMatch(
        text,
        durability === "sync"
          ? /durability sync: no answered request is missing/
          : /durability batched: records of requests answered shortly before may be missing/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

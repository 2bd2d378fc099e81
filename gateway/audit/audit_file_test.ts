/**
 * The audit file: a chain that survives restarts and rotation, a torn last line cut off at open,
 * and every kind of tampering (a changed, removed or inserted line, a missing rotated file)
 * found by `verifyAuditFiles`.
 */
import { assert, assertEquals, assertMatch } from "../../tests/assert.ts";
import { Logger } from "../../shared/mod.ts";
import { AuditFile } from "./audit_file.ts";
import { GENESIS, lineHash, readChain, verifyAuditFiles } from "./chain.ts";
import type { AuditEntry } from "./entry.ts";

function quietLogger(lines: string[] = []): Logger {
  return new Logger({ level: "warn", format: "json", sink: (l) => lines.push(l) });
}

function entries(n: number, from = 0): AuditEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    event: "request" as const,
    time: new Date(Date.UTC(2026, 10, 25, 12, 0, 0, from + i)).toISOString(),
    request_id: `r-${from + i}`,
    method: "GET",
    path: `/fhir/Patient/${from + i}`,
    status: 200,
    outcome: "success" as const,
  }));
}

async function siblings(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(`${dir}/${e.name}`);
  return names.sort();
}

Deno.test("audit file: records chain by SHA-256 and seq, across a restart", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/trail/audit.jsonl`;
  try {
    const options = { path, maxFileBytes: 1 << 20, keepFiles: 0, logger: quietLogger() };
    const first = await AuditFile.open(options);
    assertEquals(first.tip, { seq: 0, hash: GENESIS });
    await first.append(entries(3));
    await first.close();
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);

    const again = await AuditFile.open(options);
    assertEquals(again.tip.seq, 3);
    await again.append(entries(2, 3));
    await again.close();

    const lines = (await Deno.readTextFile(path)).trimEnd().split("\n");
    assertEquals(lines.length, 5);
    const records = lines.map((l) => JSON.parse(l));
    assertEquals(records.map((r) => r.seq), [1, 2, 3, 4, 5]);
    assertEquals(records[0].prev, GENESIS);
    for (let i = 1; i < lines.length; i++) assertEquals(records[i].prev, lineHash(lines[i - 1]));
    assertEquals(Object.keys(records[0])[0], "seq");
    assertEquals(Object.keys(records[0]).at(-1), "prev");
    const report = await verifyAuditFiles([path]);
    assert(report.ok, report.lines.join("\n"));
    assertMatch(report.lines[0], /5 records, seq 1-5, chain intact/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit file: rotation by size keeps one chain; keep_files deletes the oldest", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/audit.jsonl`;
  try {
    const file = await AuditFile.open({
      path,
      maxFileBytes: 1000,
      keepFiles: 0,
      logger: quietLogger(),
    });
    for (let i = 0; i < 10; i++) await file.append(entries(3, i * 3));
    await file.close();
    const files = await siblings(dir);
    assert(files.length >= 4, `rotated into ${files.length} files`);
    for (const f of files) assert((await Deno.stat(f)).size <= 1000, `${f} is over max_file_bytes`);
    // Any order: the chain is put together by seq.
    const report = await verifyAuditFiles([...files].reverse());
    assert(report.ok, report.lines.join("\n"));
    const total = (await Promise.all(files.map(readChain))).reduce((n, c) => n + c.records, 0);
    assertEquals(total, 30);

    // After a restart the new records continue the chain of the newest rotated file.
    const reopened = await AuditFile.open({
      path,
      maxFileBytes: 1000,
      keepFiles: 2,
      logger: quietLogger(),
    });
    await reopened.append(entries(12, 30));
    await reopened.close();
    const kept = await siblings(dir);
    assertEquals(kept.filter((f) => f !== path).length, 2, kept.join(", "));
    const partial = await verifyAuditFiles(kept);
    assert(partial.ok, partial.lines.join("\n"));
    assertMatch(partial.lines[0], /the chain starts at seq \d+ \(earlier files not given\)/);
    const last = (await Deno.readTextFile(path)).trimEnd().split("\n").at(-1)!;
    assertEquals(JSON.parse(last).seq, 42);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit file: a line torn by a crash is cut off at open, and the chain goes on", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/audit.jsonl`;
  try {
    const logs: string[] = [];
    const options = { path, maxFileBytes: 1 << 20, keepFiles: 0, logger: quietLogger(logs) };
    const file = await AuditFile.open(options);
    await file.append(entries(2));
    await file.close();
    const whole = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, '{"seq":3,"event":"request","time":"2026-', { append: true });

    const reopened = await AuditFile.open(options);
    assertEquals(reopened.tip.seq, 2);
    assertEquals(await Deno.readTextFile(path), whole);
    assertMatch(logs.join("\n"), /cut a record torn by a crash/);
    await reopened.append(entries(1, 2));
    await reopened.close();
    assert((await verifyAuditFiles([path])).ok);

    // A file holding nothing but a torn line becomes empty.
    const lone = `${dir}/lone.jsonl`;
    await Deno.writeTextFile(lone, '{"seq":1,"ev');
    const l = await AuditFile.open({ ...options, path: lone });
    assertEquals(l.tip.seq, 0);
    await l.close();
    assertEquals(await Deno.readTextFile(lone), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("audit verify: a changed, removed or inserted line, or a missing file, breaks the chain", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/audit.jsonl`;
  try {
    const file = await AuditFile.open({
      path,
      maxFileBytes: 1 << 20,
      keepFiles: 0,
      logger: quietLogger(),
    });
    await file.append(entries(6));
    await file.close();
    const lines = (await Deno.readTextFile(path)).trimEnd().split("\n");
    const check = async (changed: string[]) => {
      await Deno.writeTextFile(path, changed.join("\n") + "\n");
      return await verifyAuditFiles([path]);
    };

    const edited = [...lines];
    edited[2] = edited[2].replace('"status":200', '"status":404');
    let report = await check(edited);
    assertEquals(report.ok, false);
    assertMatch(report.lines.join("\n"), /BROKEN at line 4 \(seq 4\): prev is not the SHA-256/);

    report = await check(lines.filter((_, i) => i !== 3));
    assertEquals(report.ok, false);
    assertMatch(report.lines.join("\n"), /BROKEN at line 4/);

    // An inserted line chained to its predecessor still breaks the one after it.
    const forged = JSON.stringify({ ...JSON.parse(lines[1]), seq: 3, prev: lineHash(lines[1]) });
    report = await check([...lines.slice(0, 2), forged, ...lines.slice(2)]);
    assertEquals(report.ok, false);
    assertMatch(report.lines.join("\n"), /BROKEN at line 4/);

    report = await check([...lines.slice(0, 5), "not json"]);
    assertMatch(report.lines.join("\n"), /line 6: not a JSON record/);

    await check(lines);
    assert((await verifyAuditFiles([path])).ok);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }

  // Rotated files with one of the middle ones gone.
  const rotated = await Deno.makeTempDir();
  try {
    const p = `${rotated}/audit.jsonl`;
    const f = await AuditFile.open({
      path: p,
      maxFileBytes: 600,
      keepFiles: 0,
      logger: quietLogger(),
    });
    for (let i = 0; i < 8; i++) await f.append(entries(2, i * 2));
    await f.close();
    const files = await siblings(rotated);
    assert(files.length >= 3);
    // Sorted by name the active file comes first, then the rotated ones from the oldest.
    const report = await verifyAuditFiles(files.filter((_, i) => i !== 2));
    assertEquals(report.ok, false);
    assertMatch(report.lines.join("\n"), /does not continue .*a file between them is missing/);
  } finally {
    await Deno.remove(rotated, { recursive: true });
  }
});

/**
 * `gateway audit verify` over the trails of three gateways (each node's chain is its own): node
 * directories and files given together, a node with rotated files, one with a recorded gap, one
 * tampered with; the executable run as an operator runs it (read access only), its output per
 * trail and its exit status.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { Logger } from "../shared/mod.ts";
import { type AuditEntry, AuditFile } from "../gateway/audit/mod.ts";
import { removeDir, REPO_ROOT, tempDir } from "./support/mod.ts";
import { runCommand } from "./support/process.ts";

function entries(n: number, from = 0): AuditEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    event: "request" as const,
    time: new Date(Date.UTC(2026, 10, 27, 8, 0, 0, from + i)).toISOString(),
    request_id: `r-${from + i}`,
    method: "POST",
    path: `/fhir/Observation`,
    status: 201,
    outcome: "success" as const,
  }));
}

/** A node's trail at `<root>/<node>/audit.jsonl`: `batches` appends (rotating when small). */
async function nodeTrail(
  root: string,
  node: string,
  batches: AuditEntry[][],
  maxFileBytes: number,
) {
  const file = await AuditFile.open({
    path: `${root}/${node}/audit.jsonl`,
    maxFileBytes,
    keepFiles: 0,
    logger: new Logger({ level: "error", format: "json", sink: () => {} }),
  });
  for (const batch of batches) await file.append(batch);
  await file.close();
  return `${root}/${node}`;
}

function verify(paths: string[]) {
  return runCommand(Deno.execPath(), [
    "run",
    "--node-modules-dir=manual",
    "--allow-read",
    "gateway/main.ts",
    "audit",
    "verify",
    ...paths,
  ], { cwd: REPO_ROOT, timeoutMs: 60_000 });
}

Deno.test("audit verify: three nodes' trails, each chain checked on its own, gaps and breaks per node", async () => {
  const root = await tempDir("gw-audit-cluster-");
  try {
    // node-a rotates (several files), node-b notes lost records, node-c is plain.
    const a = await nodeTrail(
      root,
      "node-a",
      [entries(20), entries(20, 20), entries(20, 40)],
      4096,
    );
    const b = await nodeTrail(root, "node-b", [
      entries(5),
      [{
        event: "audit.dropped",
        time: new Date().toISOString(),
        dropped: 7,
        reason: "queue_full",
      }],
      entries(5, 5),
    ], 1 << 20);
    const c = await nodeTrail(root, "node-c", [entries(8)], 1 << 20);
    const rotated = [...Deno.readDirSync(a)].map((e) => e.name).filter((n) => n !== "audit.jsonl");
    assert(rotated.length >= 2, `node-a rotated: ${rotated}`);

    // Directories and a node's files given one by one, in any order.
    const ok = await verify([a, b, `${c}/audit.jsonl`]);
    assertEquals(ok.code, 0, ok.stdout + ok.stderr);
    const out = ok.stdout;
    assertMatch(out, new RegExp(`trail ${a}/audit.jsonl \\(node-a\\):`));
    assertMatch(out, /node-b\/audit.jsonl: 11 records, seq 1-11, chain intact, 1 recorded gap/);
    assertMatch(out, /gap at seq 6: 7 records lost before it \(queue_full/);
    assertMatch(out, /node-c\/audit.jsonl: 8 records, seq 1-8, chain intact/);
    assertMatch(out, /3 trails: 3 intact, 0 broken, 1 recorded gap\(s\) in all/);
    assertMatch(out, /audit trail intact, with 1 recorded gap/);
    // node-a's files continue each other (one chain over its rotations).
    const aLines = out.split("\n").filter((l) => l.includes("node-a/audit.jsonl"));
    assert(aLines.length >= 3, out);
    assert(!/BROKEN|does not continue/.test(out), out);

    // One node's record changed: that node is broken, the others are still reported intact.
    const path = `${c}/audit.jsonl`;
    const lines = (await Deno.readTextFile(path)).split("\n");
    lines[3] = lines[3].replace('"status":201', '"status":200');
    await Deno.writeTextFile(path, lines.join("\n"));
    const broken = await verify([a, b, c]);
    assertEquals(broken.code, 1, broken.stdout + broken.stderr);
    assertMatch(broken.stdout, /node-c\/audit.jsonl: BROKEN at line 5 \(seq 5\)/);
    assertMatch(broken.stdout, /3 trails: 2 intact, 1 broken/);
    assertMatch(broken.stdout, /audit trail BROKEN/);

    // A node's rotated file missing: a break between its files.
    await Deno.remove(`${a}/${rotated.sort()[1]}`);
    const gap = await verify([a, b]);
    assertEquals(gap.code, 1);
    assertMatch(gap.stdout, /does not continue/);
    assertMatch(gap.stdout, /2 trails: 1 intact, 1 broken/);

    // A path with no trail is a problem, not a pass.
    await Deno.mkdir(`${root}/empty`);
    const empty = await verify([`${root}/empty`]);
    assertEquals(empty.code, 1);
    assertMatch(empty.stdout, /no audit trail \(\*\.jsonl\) in this directory/);
  } finally {
    await removeDir(root);
  }
});

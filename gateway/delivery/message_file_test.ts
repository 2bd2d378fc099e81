/**
 * The message file: written with its CRC-32, read back whole or streamed; a damaged or cut file is
 * refused by both reads; a file of an earlier version (`GWQ1`, SHA-256) still reads; a queue
 * sends a damaged message to the dead letters without delivering it.
 */
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { join } from "node:path";
import { Logger } from "../../shared/mod.ts";
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { type MessageHeader, readMessage, readSmallMessage, writeMessage } from "./message_file.ts";
import { DeliveryQueue } from "./queue.ts";

const HEADER: MessageHeader = {
  id: "1700000000000-000001-0a0b0c0d",
  backend: "pacs",
  pipeline: "p",
  endpoint: "scp",
  protocol: "dimse",
  accepted_at: 1700000000000,
  method: "C-STORE",
  path: "/",
  query: "",
  headers: [["content-type", "application/dicom"]],
  metadata: { sop_instance_uid: "1.2.3" },
  content_type: "application/dicom",
};

/** A body of `n` bytes that differ along it. */
function body(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff);
}

async function written(dir: string, bytes: Uint8Array): Promise<{ path: string; size: number }> {
  for (const sub of ["tmp", "ready"]) await Deno.mkdir(join(dir, sub), { recursive: true });
  const size = await writeMessage(join(dir, "tmp"), join(dir, "ready"), HEADER, bytes, {
    fsync: true,
    limit: 1 << 30,
  });
  return { path: join(dir, "ready", `${HEADER.id}.msg`), size };
}

Deno.test("message file: ends in the CRC-32 of what precedes it; both reads give it back", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-msgfile-" });
  try {
    const bytes = body(200_000);
    const { path, size } = await written(dir, bytes);
    const file = await Deno.readFile(path);
    assertEquals(file.length, size);
    assertEquals(new TextDecoder().decode(file.subarray(0, 4)), "GWQ2");
    const end = file.length - 4;
    assertEquals(new DataView(file.buffer).getUint32(end), crc32(file.subarray(0, end)));
    const small = await readSmallMessage(path, 1 << 20);
    assertEquals(small?.header, HEADER);
    assertEquals(small?.body, bytes);
    // Its size known (no stat), into reused memory.
    const into = new Uint8Array(1 << 20);
    const known = await readSmallMessage(path, 1 << 20, into, size);
    assertEquals(known?.body, bytes);
    assert(known?.body.buffer === into.buffer);
    assertEquals(await readSmallMessage(path, 1000, undefined, size), undefined);
    const stored = await readMessage(path);
    assertEquals([stored.bodyLength, stored.size], [bytes.length, size]);
    assertEquals(file.subarray(stored.bodyOffset, stored.bodyOffset + stored.bodyLength), bytes);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("message file: a damaged byte anywhere, or a file cut short, is refused by both reads", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-msgfile-" });
  try {
    const { path, size } = await written(dir, body(100_000));
    const good = await Deno.readFile(path);
    for (const at of [5, 40, 50_000, size - 5, size - 1]) {
      const bad = good.slice();
      bad[at] ^= 0x01;
      await Deno.writeFile(path, bad);
      await assertRejects(() => readSmallMessage(path, 1 << 20), /checksum mismatch|bad header/);
      await assertRejects(
        () => readSmallMessage(path, 1 << 20, undefined, size),
        /checksum mismatch|bad header/,
      );
      await assertRejects(() => readMessage(path), /checksum mismatch|bad header/);
    }
    const cut = good.subarray(0, size - 3000);
    await Deno.writeFile(path, cut);
    await assertRejects(() => readSmallMessage(path, 1 << 20), /checksum mismatch/);
    await assertRejects(() => readSmallMessage(path, 1 << 20, undefined, size), /truncated/);
    await assertRejects(() => readMessage(path), /checksum mismatch/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("message file: a GWQ1 file of an earlier version (SHA-256) is read and checked", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-msgfile-" });
  try {
    const bytes = body(70_000);
    const head = new TextEncoder().encode(JSON.stringify(HEADER));
    const before = new Uint8Array(8 + head.length + bytes.length);
    before.set(new TextEncoder().encode("GWQ1"));
    new DataView(before.buffer).setUint32(4, head.length);
    before.set(head, 8);
    before.set(bytes, 8 + head.length);
    const sum = new Uint8Array(createHash("sha256").update(before).digest());
    const file = new Uint8Array(before.length + 32);
    file.set(before);
    file.set(sum, before.length);
    const path = join(dir, "old.msg");
    await Deno.writeFile(path, file);
    assertEquals((await readSmallMessage(path, 1 << 20, undefined, file.length))?.body, bytes);
    assertEquals((await readMessage(path)).bodyLength, bytes.length);
    file[100] ^= 0x80;
    await Deno.writeFile(path, file);
    await assertRejects(() => readSmallMessage(path, 1 << 20), /checksum mismatch/);
    await assertRejects(() => readMessage(path), /checksum mismatch/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const CONFIG: QueueConfig = {
  ordering: "fifo",
  concurrency: 1,
  max_messages: 100,
  max_bytes: 1 << 24,
  max_attempts: 0,
  max_age_secs: 86_400,
  initial_backoff_ms: 3_600_000,
  max_backoff_ms: 3_600_000,
  fsync: false,
  fhir_conditional_create: false,
};

Deno.test("message file: a queued message damaged on disk goes to the dead letters, never delivered", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-msgfile-" });
  const logger = new Logger({ level: "error", format: "json", sink: () => {} });
  const health = { degraded: () => {}, recovered: () => {} };
  const delivered: string[] = [];
  try {
    // Accepted while the destination refuses (503: retried in an hour), then damaged on disk.
    const filling = await DeliveryQueue.open("pacs", dir, CONFIG, {
      logger,
      health,
      attemptTimeoutMs: 30_000,
      deliver: () => Promise.resolve(ResponseEnvelope.json(503, {})),
    });
    const ids: string[] = [];
    for (const n of [1, 2]) {
      ids.push(
        await filling.accept(
          new RequestEnvelope({
            id: `r${n}`,
            protocol: "http",
            method: "POST",
            path: "/x",
            endpoint: "api",
            remoteAddr: "10.0.0.1",
            headers: new Headers({ "content-type": "application/octet-stream" }),
            body: new Body(body(300_000 + n), "application/octet-stream"),
          }),
        ),
      );
    }
    await filling.close();
    const path = join(dir, "ready", `${ids[0]}.msg`);
    const bytes = await Deno.readFile(path);
    bytes[150_000] ^= 0x10;
    await Deno.writeFile(path, bytes);
    const queue = await DeliveryQueue.open("pacs", dir, CONFIG, {
      logger,
      health,
      attemptTimeoutMs: 30_000,
      releasesBody: () => true,
      deliver: (req) => {
        delivered.push(req.metadata.delivery_id);
        return Promise.resolve(ResponseEnvelope.json(200, {}));
      },
    });
    try {
      await waitFor(() => Promise.resolve(queue.stats().delivered_total === 1), {
        timeoutMs: 10_000,
        description: "the whole message delivered",
      });
      assertEquals(delivered, [ids[1]]);
      assertEquals(queue.stats().dead, 1);
      const dead = await queue.inspect(ids[0], "dead");
      assert(String(dead.error ?? "").includes("checksum mismatch"), JSON.stringify(dead));
    } finally {
      await queue.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

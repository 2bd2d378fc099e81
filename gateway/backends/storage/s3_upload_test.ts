import type { S3Client } from "@aws-sdk/client-s3";
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { partSizeFor, uploadObject, type UploadTarget } from "./s3_upload.ts";

const MIB = 1024 * 1024;

/** A stand-in S3 client that records commands and can fail one of them. */
function fakeClient(failOn?: string, uploadOutlivesAborts = 0) {
  let aborts = 0;
  const sent: { name: string; input: Record<string, unknown> }[] = [];
  /** Part bodies as they were when each part's upload finished (a reused buffer shows here). */
  const bodies = new Map<number, Uint8Array>();
  let inFlight = 0;
  let maxInFlight = 0;
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      const name = command.constructor.name.replace(/Command$/, "");
      sent.push({ name, input: command.input });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // A paced fake S3 (a call takes a while, so parts overlap and buffers could be reused under
      // them). The assertions are bounds and contents that hold whatever the pause's length.
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      if (name === "UploadPart") {
        bodies.set(command.input.PartNumber as number, (command.input.Body as Uint8Array).slice());
      }
      if (name === failOn) throw Object.assign(new Error("boom"), { name: "InternalError" });
      if (name === "AbortMultipartUpload") aborts++;
      if (name === "ListParts" && aborts > uploadOutlivesAborts) {
        throw Object.assign(new Error("gone"), { name: "NoSuchUpload" });
      }
      if (name === "CreateMultipartUpload") return { UploadId: "up-1" };
      if (name === "UploadPart") return { ETag: `"etag-${command.input.PartNumber}"` };
      return {};
    },
  };
  return {
    client: client as unknown as S3Client,
    sent,
    bodies,
    maxInFlight: () => maxInFlight,
  };
}

function target(client: S3Client, over: Partial<UploadTarget> = {}): UploadTarget {
  return {
    client,
    bucket: "b",
    key: "k",
    contentType: "application/octet-stream",
    ifNoneMatch: false,
    signal: new AbortController().signal,
    length: null,
    partBytes: 5 * MIB,
    ...over,
  };
}

function chunks(total: number, size = 300_000): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      const n = Math.min(size, total - sent);
      const chunk = new Uint8Array(n);
      for (let i = 0; i < n; i++) chunk[i] = (sent + i) % 251;
      c.enqueue(chunk);
      sent += n;
    },
  });
}

Deno.test("s3 upload: part sizes stay within S3's 10 000 parts", () => {
  assertEquals(partSizeFor(null), 8 * MIB);
  assertEquals(partSizeFor(10 * MIB), 8 * MIB);
  assertEquals(partSizeFor(200_000 * MIB), 20 * MIB);
  assertEquals(partSizeFor(null, 1), 5 * MIB);
});

Deno.test("s3 upload: a body within one part is one PutObject with its sha256", async () => {
  const fake = fakeClient();
  const result = await uploadObject(chunks(MIB), target(fake.client, { ifNoneMatch: true }));
  assertEquals(fake.sent.map((s) => s.name), ["PutObject"]);
  const input = fake.sent[0].input;
  assertEquals((input.Body as Uint8Array).byteLength, MIB);
  assertEquals(input.Metadata, { sha256: result.sha256 });
  assertEquals(input.IfNoneMatch, "*");
  assertEquals(result.multipart, false);
});

Deno.test("s3 upload: a larger body is a multipart upload with bounded parts in flight", async () => {
  const fake = fakeClient();
  const result = await uploadObject(
    chunks(17 * MIB + 5),
    target(fake.client, { ifNoneMatch: true }),
  );
  const names = fake.sent.map((s) => s.name);
  assertEquals(names[0], "CreateMultipartUpload");
  assertEquals(names.filter((n) => n === "UploadPart").length, 4);
  assertEquals(names.at(-1), "CompleteMultipartUpload");
  const parts = fake.sent.filter((s) => s.name === "UploadPart");
  assertEquals(parts.map((p) => (p.input.Body as Uint8Array).byteLength), [
    5 * MIB,
    5 * MIB,
    5 * MIB,
    2 * MIB + 5,
  ]);
  const complete = fake.sent.at(-1)!.input;
  assertEquals(complete.IfNoneMatch, "*");
  assertEquals(
    (complete.MultipartUpload as { Parts: { PartNumber: number }[] }).Parts.map((p) =>
      p.PartNumber
    ),
    [1, 2, 3, 4],
  );
  assertEquals(result.size, 17 * MIB + 5);
  assertEquals(result.multipart, true);
  // Every part carried its own bytes until its upload ended (part buffers are reused).
  let offset = 0;
  for (let number = 1; number <= 4; number++) {
    const body = fake.bodies.get(number)!;
    for (let i = 0; i < body.byteLength; i += 4099) {
      if (body[i] !== (offset + i) % 251) {
        throw new Error(`part ${number} byte ${i} was overwritten`);
      }
    }
    offset += body.byteLength;
  }
  // Create and Complete are alone; parts go two at a time at most.
  assertEquals(fake.maxInFlight() <= 2, true);
});

Deno.test("s3 upload: a failed part aborts the multipart upload and cancels the body", async () => {
  const fake = fakeClient("UploadPart");
  let cancelled = false;
  let sent = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= 40 * MIB) return c.close();
      c.enqueue(new Uint8Array(300_000));
      sent += 300_000;
    },
    cancel() {
      cancelled = true;
    },
  });
  await assertRejects(() => uploadObject(source, target(fake.client)), /boom/);
  const names = fake.sent.map((s) => s.name);
  assertEquals(names.slice(-2), ["AbortMultipartUpload", "ListParts"]);
  assertEquals(names.includes("CompleteMultipartUpload"), false);
  assertEquals(cancelled, true);
});

Deno.test("s3 upload: an aborted call aborts the multipart upload", async () => {
  const fake = fakeClient();
  const controller = new AbortController();
  let sent = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(c) {
      sent += MIB;
      if (sent > 12 * MIB) {
        controller.abort();
        return new Promise(() => {});
      }
      c.enqueue(new Uint8Array(MIB));
    },
  });
  await assertRejects(() =>
    uploadObject(source, target(fake.client, { signal: controller.signal }))
  );
  assertEquals(fake.sent.slice(-2).map((s) => s.name), ["AbortMultipartUpload", "ListParts"]);
  assertEquals(fake.sent.some((s) => s.name === "CompleteMultipartUpload"), false);
});

Deno.test("s3 upload: the abort is repeated while a late part keeps the upload alive", async () => {
  // The server still lists the upload after the first two aborts (a part in flight landed late).
  const fake = fakeClient("UploadPart", 2);
  await assertRejects(() => uploadObject(chunks(12 * MIB), target(fake.client)), /boom/);
  const tail = fake.sent.map((s) => s.name).filter((n) =>
    n === "AbortMultipartUpload" || n === "ListParts"
  );
  assertEquals(tail, [
    "AbortMultipartUpload",
    "ListParts",
    "AbortMultipartUpload",
    "ListParts",
    "AbortMultipartUpload",
    "ListParts",
  ]);
  for (const s of fake.sent.filter((s) => s.name === "ListParts")) {
    assertEquals(s.input.UploadId, "up-1");
  }
});

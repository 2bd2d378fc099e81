/**
 * Runs `s3rver` (an S3 emulator from npm) for the storage tests, as its own process:
 *
 *   deno run -A tests/storage_s3rver.ts --dir DIR --port PORT --bucket NAME --keys ID:SECRET,...
 *
 * Objects are kept as files under DIR (`<bucket>/<key>._S3rver_object`), so tests can see which
 * keys were written. s3rver knows the access key `S3RVER` and the ones given with `--keys`; it
 * refuses any other (403 InvalidAccessKeyId). Prints `READY <port>` once it listens, then one
 * line `REQ <method> <path>[?<query>] <access key id>` per request.
 *
 * s3rver 3.7 does not implement AbortMultipartUpload (it answers 405 and keeps the parts) nor
 * ListParts; this script adds both as S3 does them (abort: 204, the upload and its parts removed;
 * ListParts: 404 NoSuchUpload once the upload is gone, else its listing), so tests can check that
 * an aborted upload leaves no parts behind, even when a part lands after the first abort.
 */
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import S3rver from "s3rver";

function arg(name: string, fallback?: string): string {
  const at = Deno.args.indexOf(`--${name}`);
  const value = at === -1 ? fallback : Deno.args[at + 1];
  if (value === undefined) throw new Error(`missing --${name}`);
  return value;
}

const require = createRequire(import.meta.url);
const account = require("s3rver/lib/models/account.js") as {
  DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void };
};
for (const pair of arg("keys", "").split(",").filter((p) => p !== "")) {
  const [id, secret] = pair.split(":");
  account.DUMMY_ACCOUNT.createKeyPair(id, secret);
}

const directory = arg("dir");
const server = new S3rver({
  address: "127.0.0.1",
  port: Number(arg("port")),
  directory,
  silent: true,
  configureBuckets: [{ name: arg("bucket") }],
});

/** The part of Koa's context this script reads and writes. */
interface Context {
  method: string;
  path: string;
  querystring: string;
  query: Record<string, string | undefined>;
  headers: Record<string, string | undefined>;
  status: number;
  body: unknown;
  /** The response's content type. */
  type: string;
}
const app = server as unknown as {
  middleware: ((ctx: Context, next: () => Promise<void>) => Promise<void>)[];
};
app.middleware.unshift(async (ctx, next) => {
  const credential = /Credential=([^/]+)\//.exec(ctx.headers.authorization ?? "")?.[1] ?? "-";
  const query = ctx.querystring ? `?${ctx.querystring}` : "";
  console.log(`REQ ${ctx.method} ${ctx.path}${query} ${credential}`);
  const uploadId = ctx.query.uploadId;
  if (ctx.method === "DELETE" && uploadId && /^[0-9a-f]+$/.test(uploadId)) {
    const bucket = ctx.path.split("/")[1];
    await rm(`${directory}/${bucket}/._S3rver_uploads/${uploadId}`, {
      recursive: true,
      force: true,
    });
    console.log(`ABORTED ${uploadId}`);
    ctx.status = 204;
    ctx.body = null;
    return;
  }
  if (ctx.method === "GET" && uploadId && /^[0-9a-f]+$/.test(uploadId)) {
    const bucket = ctx.path.split("/")[1];
    const held = await Deno.stat(`${directory}/${bucket}/._S3rver_uploads/${uploadId}`)
      .then(() => true, () => false);
    ctx.type = "application/xml";
    if (!held) {
      ctx.status = 404;
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code>` +
        `<Message>The specified upload does not exist.</Message></Error>`;
    } else {
      ctx.status = 200;
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult><Bucket>${bucket}` +
        `</Bucket><UploadId>${uploadId}</UploadId></ListPartsResult>`;
    }
    return;
  }
  await next();
});
const address = await server.run();
console.log(`READY ${address.port}`);
Deno.addSignalListener("SIGTERM", async () => {
  await server.close();
  Deno.exit(0);
});

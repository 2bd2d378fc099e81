import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { localRootDir, parseS3Root, storageSettings } from "./options.ts";

const noEnv = () => undefined;
const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("options: local roots resolve against the config directory", () => {
  assertEquals(localRootDir("data/objects", "/etc/gateway"), "/etc/gateway/data/objects");
  assertEquals(localRootDir("../shared/./x/", "/etc/gateway"), "/etc/shared/x");
  assertEquals(localRootDir("/srv/store", "/etc/gateway"), "/srv/store");
  const s = storageSettings({ root: "store", write_pattern: "{uuid}" }, "/cfg", noEnv);
  assertEquals(s.root, { kind: "local", dir: "/cfg/store" });
  assertEquals(s.read, undefined);
  assertEquals(s.write?.names, ["uuid"]);
});

Deno.test("options: s3 roots, prefixes, region and credentials from the options", () => {
  assertEquals(parseS3Root("s3://bucket"), { bucket: "bucket", prefix: "" });
  assertEquals(parseS3Root("s3://bucket/"), { bucket: "bucket", prefix: "" });
  assertEquals(parseS3Root("s3://bucket/a/b/"), { bucket: "bucket", prefix: "a/b" });
  const s = storageSettings(
    {
      root: "s3://bucket/in",
      read_pattern: "{path}",
      region: "eu-central-1",
      access_key_id: "AK",
      secret_access_key: "SK",
      endpoint: "http://127.0.0.1:9000",
    },
    "/cfg",
    env({ AWS_ACCESS_KEY_ID: "ENV", AWS_SECRET_ACCESS_KEY: "ENVS" }),
  );
  assertEquals(s.root, {
    kind: "s3",
    bucket: "bucket",
    prefix: "in",
    region: "eu-central-1",
    endpoint: "http://127.0.0.1:9000",
    credentials: { accessKeyId: "AK", secretAccessKey: "SK", source: "options" },
  });
});

Deno.test("options: credentials and region fall back to the AWS environment variables", () => {
  const s = storageSettings(
    { root: "s3://bucket", write_pattern: "{uuid}" },
    "/cfg",
    env({
      AWS_ACCESS_KEY_ID: "EK",
      AWS_SECRET_ACCESS_KEY: "ES",
      AWS_SESSION_TOKEN: "TOK",
      AWS_REGION: "us-west-2",
    }),
  );
  assertEquals(s.root.kind === "s3" && s.root.credentials, {
    accessKeyId: "EK",
    secretAccessKey: "ES",
    sessionToken: "TOK",
    source: "environment",
  });
  assertEquals(s.root.kind === "s3" && s.root.region, "us-west-2");
});

Deno.test("options: problems are errors naming the option", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ read_pattern: "{path}" }, /missing required option `root`/],
    [{ root: "/x" }, /set read_pattern, write_pattern, or both/],
    [{ root: "/x", read_pattern: "{uuid}" }, /read_pattern: \{uuid\} makes a new value/],
    [{ root: "/x", read_pattern: "{timestamp}/{path}" }, /read_pattern: \{timestamp\}/],
    [{ root: "/x", write_pattern: "../{uuid}" }, /write_pattern: .* `\.\.` segment/],
    [{ root: "s3://b/x", read_pattern: "{path}", region: "r" }, /no S3 credentials/],
    [{ root: "s3://b/x", read_pattern: "{path}", region: "r", access_key_id: "a" }, /set both/],
    [
      { root: "s3://b/x", read_pattern: "{path}", access_key_id: "a", secret_access_key: "s" },
      /no S3 region/,
    ],
    [{ root: "s3://b/../x", read_pattern: "{path}", region: "r" }, /key prefix/],
  ];
  for (const [options, why] of cases) {
    await assertRejects(() => storageSettings(options, "/cfg", noEnv), why);
  }
});

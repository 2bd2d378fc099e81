/**
 * The `storage` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { BackendOwner, ComponentType, RuleProblem } from "../component_type.ts";
import { field } from "../fields.ts";
import { httpUrl, S3_ROOT, text } from "../values.ts";
import { bothOrNeither, onlyWhen } from "./rules.ts";

/** `service = "storage"`: the type's option schema. */
export const storageBackend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "storage",
  doc: "Objects in a local directory or an S3-compatible bucket, addressed by path templates " +
    "(see docs/storage.md).",
  fields: {
    root: field(
      "string",
      text().refine(
        (v) => !v.startsWith("s3://") || S3_ROOT.test(v),
        "an S3 root must be s3://<bucket>/<prefix> with a valid bucket name",
      ),
      "Local directory (relative to the config file's directory) or `s3://<bucket>/<prefix>`.",
      {
        path: "config",
        required: true,
        example: "s3://archive/incoming",
      },
    ),
    read_pattern: field(
      "string",
      text(),
      "Path template for GET, HEAD and DELETE: `{path}` (the request path below the endpoint), " +
        "`{<metadata key>}`, `{<field>}`.",
      {
        requiredWhen: "`write_pattern` is absent",
        example: "{path}",
      },
    ),
    write_pattern: field(
      "string",
      text(),
      "Path template for POST and PUT: as read_pattern, plus `{uuid}`, `{timestamp}`, " +
        "`{timestamp_compact}`, `{date}`.",
      {
        requiredWhen: "`read_pattern` is absent",
        example: "{patient_id}/{uuid}.json",
      },
    ),
    region: field(
      "string",
      text(),
      "S3 region (`${AWS_REGION}` takes it from the environment).",
      {
        requiredWhen: "`root` is `s3://`",
        example: "eu-central-1",
      },
    ),
    access_key_id: field("string", text(), "S3 access key id (else AWS_ACCESS_KEY_ID).", {
      secret: true,
      example: "${S3_KEY_ID}",
    }),
    secret_access_key: field(
      "string",
      text(),
      "S3 secret key (else AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN if set).",
      {
        secret: true,
        example: "${S3_SECRET}",
      },
    ),
    endpoint: field(
      "string",
      httpUrl(),
      "Endpoint of an S3-compatible store (path-style addressing).",
      {
        example: "http://minio:9000",
      },
    ),
  },
  rules: (o) => {
    const s3 = typeof o.root === "string" && o.root.startsWith("s3://");
    const problems: RuleProblem[] = [];
    if (o.read_pattern === undefined && o.write_pattern === undefined) {
      problems.push({ message: "set read_pattern, write_pattern, or both" });
    }
    if (s3 && o.region === undefined) {
      problems.push({
        key: "region",
        message: "missing required key `region` (required when root is s3://)",
      });
    }
    problems.push(
      ...onlyWhen(
        o,
        ["region", "access_key_id", "secret_access_key", "endpoint"],
        s3,
        "applies only when root is s3://",
      ),
      ...bothOrNeither(o, "access_key_id", "secret_access_key"),
    );
    return problems;
  },
};

/**
 * The `jmix` endpoint type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { int, pathPrefix, text } from "../values.ts";
import { PATH_PREFIX_DOC } from "./http_family.ts";
import { pem } from "./pem.ts";

/** `service = "jmix"`: the type's option schema. */
export const jmixEndpoint: ComponentType = {
  kind: "endpoint",
  name: "jmix",
  doc: "JMIX package endpoint: `/api/jmix` routes under the prefix; packages and the study " +
    "index live in the pipeline's `storage` backend, studies are retrieved through its " +
    "`dicom_scu` backend (see docs/jmix.md).",
  fields: {
    path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, {
      required: true,
      example: "/jmix",
    }),
    sender_name: field("string", text(), "`sender.name` of the packages the gateway builds.", {
      default: "gateway",
      example: "hospital-a-gateway",
    }),
    max_package_bytes: field("integer", int(1), "Largest package upload (413 beyond it).", {
      default: 104_857_600,
      example: 536_870_912,
    }),
    max_uncompressed_bytes: field(
      "integer",
      int(1),
      "Most bytes the entries of one package may inflate to (zip bombs are refused).",
      { default: 1_073_741_824, example: 4_294_967_295 },
    ),
    max_entries: field("integer", int(1), "Most zip entries in one package.", {
      default: 10_000,
      example: 50_000,
    }),
    signing_key: field(
      "string",
      pem("PRIVATE KEY"),
      "Ed25519 private key (PKCS#8 PEM): built packages get a `manifest.jws`.",
      { secret: true, example: "${JMIX_SIGNING_KEY}" },
    ),
    signing_key_id: field("string", text(), "`kid` of the signature.", { example: "gw-2025" }),
    verify_keys: field(
      "array of strings",
      z.array(pem("PUBLIC KEY")),
      "Ed25519 public keys (SPKI PEM) an uploaded `manifest.jws` must verify with.",
      { example: ["${JMIX_PARTNER_KEY}"] },
    ),
    require_signature: field(
      "boolean",
      z.boolean(),
      "Refuse uploads without a valid `manifest.jws`.",
      { default: false, example: true },
    ),
    encryption_public_key: field(
      "string",
      pem("PUBLIC KEY"),
      "X25519 public key (SPKI PEM): built packages carry their payload encrypted for it.",
      { example: "${JMIX_RECIPIENT_KEY}" },
    ),
    encryption_key_id: field("string", text(), "`key_id` written with the encryption.", {
      example: "recipient-1",
    }),
    decryption_key: field(
      "string",
      pem("PRIVATE KEY"),
      "X25519 private key (PKCS#8 PEM): encrypted uploads are decrypted to be checked and indexed.",
      { secret: true, example: "${JMIX_DECRYPTION_KEY}" },
    ),
  },
  rules: (o) =>
    o.require_signature === true && o.verify_keys === undefined
      ? [{ key: "verify_keys", message: "require_signature needs at least one verify key" }]
      : [],
};

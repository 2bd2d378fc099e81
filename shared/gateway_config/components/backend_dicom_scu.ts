/**
 * The `dicom_scu` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { BackendOwner, ComponentType } from "../component_type.ts";
import { RETRIEVE_FIELDS, retrieveBudgetProblems } from "../dicom_retrieve.ts";
import { field } from "../fields.ts";
import { aeTitle, int, port, text } from "../values.ts";
import { bothOrNeither, onlyWhen } from "./rules.ts";

/** `service = "dicom_scu"`: the type's option schema. */
export const dicomScuBackend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "dicom_scu",
  doc: "DICOM DIMSE peer (PACS): C-ECHO, C-FIND, C-MOVE, C-GET, C-STORE.",
  fields: {
    aet: field("string", aeTitle(), "Remote AE title.", { required: true, example: "ORTHANC" }),
    host: field("string", text(), "PACS hostname or IP.", {
      required: true,
      example: "pacs.local",
    }),
    port: field("integer", port(), "PACS port.", { required: true, example: 4242 }),
    local_aet: field("string", aeTitle(), "AE title of the gateway as SCU.", {
      default: "GATEWAY_SCU",
      example: "GW_SCU",
    }),
    dimse_retrieve_mode: field(
      "string",
      z.enum(["get", "move"]),
      "`get` (C-GET, no PACS-side setup) or `move` (C-MOVE; the PACS must know the SCU's AE title and address).",
      {
        default: "get",
        example: "move",
      },
    ),
    use_tls: field("boolean", z.boolean(), "DICOM TLS to the PACS.", {
      default: false,
      example: true,
    }),
    incoming_store_port: field(
      "integer",
      port(),
      "Port of the C-STORE SCP that receives C-MOVE results.",
      {
        requiredWhen: "`dimse_retrieve_mode` is `move`",
        example: 11113,
      },
    ),
    persistent_store_scp: field(
      "boolean",
      z.boolean(),
      "Keep the C-STORE SCP listening between requests.",
      {
        default: false,
        example: true,
      },
    ),
    ca_cert_path: field("string", text(), "PEM CA certificate of the PACS (with `use_tls`).", {
      path: "config",
      example: "certs/pacs-ca.pem",
    }),
    cert_path: field("string", text(), "PEM client certificate (with `use_tls`).", {
      path: "config",
      example: "certs/scu.pem",
    }),
    key_path: field("string", text(), "PEM client key (with `use_tls`).", {
      path: "config",
      example: "certs/scu-key.pem",
    }),
    association_idle_secs: field(
      "integer",
      int(0, 3600),
      "Seconds an association that served a C-ECHO, C-FIND or C-STORE stays open for the next " +
        "operation its presentation contexts serve (saves the connect and negotiation round " +
        "trips; C-STOREs share one association and its contexts); released (A-RELEASE) after " +
        "that long unused, on reload and at shutdown. 0 opens one per operation.",
      { default: 15, example: 60 },
    ),
    max_associations: field(
      "integer",
      int(0, 1000),
      "Most associations open to the PACS at once, idle and busy (per data-plane isolate): an " +
        "operation past it takes the place of an idle association that does not serve it, else " +
        "waits for one (within the backend's `timeout_secs`). 0: no maximum.",
      { default: 8, example: 2 },
    ),
    ...RETRIEVE_FIELDS,
  },
  rules: (o) => [
    ...(o.dimse_retrieve_mode === "move" && o.incoming_store_port === undefined
      ? [{
        key: "incoming_store_port",
        message:
          'missing required key `incoming_store_port` (required when dimse_retrieve_mode is "move")',
      }]
      : []),
    ...onlyWhen(
      o,
      ["ca_cert_path", "cert_path", "key_path"],
      o.use_tls === true,
      "applies only when use_tls = true",
    ),
    ...bothOrNeither(o, "cert_path", "key_path"),
    ...retrieveBudgetProblems(o),
  ],
};

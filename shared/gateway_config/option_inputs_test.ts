import assert from "node:assert/strict";
import { BUILT_IN_TYPES } from "./components/mod.ts";
import { inputText, optionInputs, optionJsonSchema, optionsFromInputs } from "./option_inputs.ts";
import { validateConfig } from "./validate.ts";

Deno.test("optionInputs: typed controls, enums as choices, secrets, help from the schema", () => {
  const scu = optionInputs("backend", "dicom_scu")!;
  const by = (key: string) => scu.find((i) => i.key === key)!;
  assert.equal(by("port").control, "integer");
  assert.equal(by("use_tls").control, "boolean");
  assert.deepEqual(
    [by("dimse_retrieve_mode").control, by("dimse_retrieve_mode").choices],
    ["select", ["get", "move"]],
  );
  assert.match(by("aet").help, /Remote AE title\. Required\./);
  assert.match(by("local_aet").help, /Default: "GATEWAY_SCU"/);
  const storage = optionInputs("backend", "storage")!;
  assert.equal(storage.find((i) => i.key === "secret_access_key")!.control, "secret");
  assert.equal(storage.find((i) => i.key === "secret_access_key")!.placeholder, "S3_SECRET");
  const filter = optionInputs("middleware", "request_filter")!;
  assert.equal(filter.find((i) => i.key === "dicomweb_services")!.control, "choices");
  assert.equal(filter.find((i) => i.key === "paths")!.control, "lines");
  assert.equal(
    optionInputs("middleware", "headers")!.find((i) => i.key === "request_set")!.control,
    "json",
  );
  assert.deepEqual(optionInputs("middleware", "transform", ["spec_path"])!.map((i) => i.key), [
    "apply",
    "fail_on_error",
    "max_steps",
    "debug",
    "input",
  ]);
  assert.equal(optionInputs("middleware", "no_such_type"), undefined);
});

Deno.test("optionsFromInputs: the table the JSON path gives, empty inputs left out", () => {
  const inputs = optionInputs("backend", "storage")!;
  const posted: Record<string, string[]> = {
    root: [" s3://archive/in "],
    write_pattern: ["{uuid}.json"],
    region: ["eu-central-1"],
    access_key_id: ["S3_KEY_ID"],
    secret_access_key: ["${S3_SECRET}"],
    endpoint: [""],
  };
  const { options, problems } = optionsFromInputs(inputs, (k) => posted[k] ?? []);
  assert.deepEqual(problems, []);
  assert.deepEqual(options, {
    root: "s3://archive/in",
    write_pattern: "{uuid}.json",
    region: "eu-central-1",
    access_key_id: "${S3_KEY_ID}",
    secret_access_key: "${S3_SECRET}",
  });
  const filter = optionsFromInputs(optionInputs("middleware", "request_filter")!, (k) =>
    ({
      methods: ["GET\n\n HEAD "],
      dicomweb_services: ["qido", "wado"],
      max_body_bytes: ["x"],
      fhir_interactions: [],
    })[k] ?? []);
  assert.deepEqual(filter.options, {
    methods: ["GET", "HEAD"],
    dicomweb_services: ["qido", "wado"],
  });
  assert.deepEqual(filter.problems, [{ key: "max_body_bytes", message: "must be a number" }]);
});

Deno.test("every built-in option round-trips through its input: example in, same value out", () => {
  for (const type of BUILT_IN_TYPES) {
    for (const [key, f] of Object.entries(type.fields ?? {})) {
      if (f.example === undefined) continue;
      const input = optionInputs(type.kind, type.name)!.find((i) => i.key === key)!;
      const text = inputText(input, f.example);
      const posted = input.control === "choices" ? text.split("\n") : [text];
      const { options, problems } = optionsFromInputs([input], () => posted);
      assert.deepEqual(problems, [], `${type.name}.${key}`);
      assert.deepEqual(options[key], f.example, `${type.name}.${key}`);
    }
  }
});

Deno.test("optionJsonSchema: keys, types, enums and required keys of a type", () => {
  const schema = optionJsonSchema("backend", "dicom_scu")!;
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(schema.required, ["aet", "host", "port"]);
  assert.deepEqual(props.dimse_retrieve_mode.enum, ["get", "move"]);
  assert.equal(props.port.type, "integer");
  assert.equal(schema.additionalProperties, false);
  // Its example options are a valid table.
  const example = Object.fromEntries(
    Object.entries(props).map(([k, p]) => [k, (p.examples as unknown[])[0]]),
  );
  const raw = { backends: { pacs: { service: "dicom_scu", options: example } } };
  assert.deepEqual(validateConfig(raw).problems.map((p) => p.message), []);
});

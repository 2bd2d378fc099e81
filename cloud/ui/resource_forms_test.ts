import { assertEquals } from "../../tests/assert.ts";
import { fieldsOf, optionFormCss, parseForm } from "./resource_forms.tsx";

const endpointFields = fieldsOf("endpoints", true);
const form = (entries: [string, string][]) => new URLSearchParams(entries);

Deno.test("parseForm: typed options are read when the JSON is as the form showed it", () => {
  const typed = parseForm(
    endpointFields,
    form([
      ["name", "scp"],
      ["type", "dicom_scp"],
      ["options", "{}"],
      ["options_was", "{}"],
      ["options.dicom_scp.local_aet", "GATEWAY"],
      ["options.dicom_scp.port", "104"],
      ["options.dicom_scp.enable_find", "true"],
      ["options.dicom_scp.enable_move", ""],
      // Another type's inputs are not read.
      ["options.http.path_prefix", "/api"],
    ]),
  );
  assertEquals(typed.problems, []);
  assertEquals(typed.body.options, { local_aet: "GATEWAY", port: 104, enable_find: true });
  assertEquals(typed.raw["options.dicom_scp.port"], "104");
});

Deno.test("parseForm: changed JSON, a form without the shown JSON, or a type without fields use the JSON", () => {
  const changed = parseForm(
    endpointFields,
    form([
      ["type", "http"],
      ["options", '{"path_prefix": "/json"}'],
      ["options_was", ""],
      ["options.http.path_prefix", "/typed"],
    ]),
  );
  assertEquals(changed.body.options, { path_prefix: "/json" });
  const older = parseForm(endpointFields, form([["type", "http"], ["options", "{}"]]));
  assertEquals(older.body.options, {});
  const empty = parseForm(endpointFields, form([["type", "http"], ["options", ""]]));
  assertEquals("options" in empty.body, false);
  const echo = parseForm(
    fieldsOf("backends", true),
    form([["type", "echo"], ["options", ""], ["options_was", ""], ["targets", "[]"]]),
  );
  assertEquals("options" in echo.body, false);
  const bad = parseForm(
    endpointFields,
    form([["type", "http"], ["options", "{"], ["options_was", ""]]),
  );
  assertEquals(bad.problems.map((p) => p.field), ["options"]);
});

Deno.test("parseForm: a transform's spec_path is not a field (the cloud writes it)", () => {
  const parsed = parseForm(
    fieldsOf("middleware", true),
    form([
      ["type", "transform"],
      ["options", ""],
      ["options_was", ""],
      ["options.transform.spec_path", "x.json"],
      ["options.transform.apply", "both"],
    ]),
  );
  assertEquals(parsed.body.options, { apply: "both" });
});

Deno.test("optionFormCss: one rule per type name shows the chosen type's group", () => {
  const css = optionFormCss();
  for (const name of ["fhir", "dicom_scu", "request_filter"]) {
    assertEquals(
      css.includes(
        `form:has(select[name="type"] option[value="${name}"]:checked) .options-for[data-options-for="${name}"]`,
      ),
      true,
      name,
    );
  }
});

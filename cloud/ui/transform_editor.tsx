/** @jsxImportSource hono/jsx */
/**
 * The JOLT editor: a transform's spec and a sample input side by side, the output of the spec on
 * the sample (the same preview as `POST /api/transforms/preview`), problems pointing at the spec
 * path, and starter examples. The preview updates as one types (htmx posts the form and swaps the
 * preview panel); without script, the Preview button does the same with a page load.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { toApiError } from "../api/mod.ts";
import type { AnyRecord } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { form, notFoundPage, page } from "./guard.tsx";
import { Csrf, Layout } from "./layout.tsx";
import type { Access, Visible } from "../resources/mod.ts";
import { type FieldErrors, Fields, fieldsOf, parseForm } from "./resource_forms.tsx";
import { readOnlyRefused, SharedNotice, sharedRecordPage, teamName } from "./shared_pages.tsx";
import { GeneralErrors, saveRecord } from "./resource_pages.tsx";
import type { UiUser } from "./session.ts";

/** A starter example: a spec and an input it works on. */
export interface JoltExample {
  id: string;
  title: string;
  spec: unknown[];
  input: unknown;
}

/** Starter examples offered by the editor (each is checked by the tests to run as shown). */
export const JOLT_EXAMPLES: JoltExample[] = [
  {
    id: "fhir-patient-rename",
    title: "FHIR Patient: rename fields",
    spec: [{
      operation: "shift",
      spec: {
        resourceType: "type",
        id: "patientId",
        birthDate: "dateOfBirth",
        gender: "sex",
        name: { "0": { family: "lastName", given: { "0": "firstName" } } },
      },
    }, {
      operation: "default",
      spec: { source: "gateway" },
    }],
    input: {
      resourceType: "Patient",
      id: "example",
      name: [{ family: "Chalmers", given: ["Peter", "James"] }],
      gender: "male",
      birthDate: "1974-12-25",
    },
  },
  {
    id: "dicom-json-tags",
    title: "DICOM JSON: extract tags",
    spec: [{
      operation: "shift",
      spec: {
        "00100010": { Value: { "0": { Alphabetic: "patientName" } } },
        "00100020": { Value: { "0": "patientId" } },
        "0020000D": { Value: { "0": "studyInstanceUid" } },
        "00080060": { Value: { "0": "modality" } },
      },
    }],
    input: {
      "00080060": { vr: "CS", Value: ["CT"] },
      "00100010": { vr: "PN", Value: [{ Alphabetic: "Doe^Jane" }] },
      "00100020": { vr: "LO", Value: ["PID-12345"] },
      "0020000D": { vr: "UI", Value: ["1.2.840.113619.2.55.3.604688119.971.1234567890.1"] },
    },
  },
];

const SAMPLE_LIMIT = 128 * 1024;

/** The preview of `specText` on `sampleText` (run in a worker): output or the problems. */
export async function previewOf(
  s: Services,
  specText: string,
  sampleText: string,
): Promise<{ output?: string; problems: { field: string; message: string }[] }> {
  let spec: unknown, input: unknown;
  try {
    spec = JSON.parse(specText);
  } catch (err) {
    return { problems: [{ field: "spec", message: `not valid JSON: ${(err as Error).message}` }] };
  }
  if (sampleText.length > SAMPLE_LIMIT) {
    return { problems: [{ field: "sample", message: "the sample is larger than 128 KiB" }] };
  }
  try {
    input = sampleText.trim() === "" ? {} : JSON.parse(sampleText);
  } catch (err) {
    return {
      problems: [{ field: "sample", message: `not valid JSON: ${(err as Error).message}` }],
    };
  }
  try {
    return {
      output: JSON.stringify((await s.resources.preview(spec, input)).output, null, 2),
      problems: [],
    };
  } catch (err) {
    const api = toApiError(err);
    // A busy preview pool is a problem to show too (type on, it runs again).
    if (!api || (api.status >= 500 && api.code !== "preview_busy")) throw err;
    return { problems: api.fields ?? [{ field: "", message: api.message }] };
  }
}

function PreviewPanel(
  { preview }: { preview: Awaited<ReturnType<typeof previewOf>> | null },
) {
  return (
    <section id="preview" class="card" aria-live="polite" data-testid="jolt-preview">
      <h2>Output</h2>
      {preview === null
        ? <p class="muted">Type a sample input to see the output.</p>
        : preview.problems.length
        ? (
          <ul class="field-error" data-testid="jolt-problems">
            {preview.problems.map((p) => (
              <li key={p.field + p.message}>
                {p.field ? <code>{p.field}</code> : null} {p.message}
              </li>
            ))}
          </ul>
        )
        : <pre data-testid="jolt-output">{preview.output}</pre>}
    </section>
  );
}

/** Whose transform a write share lets the team edit. */
interface SharedBy {
  access: Access;
  owner: string;
}

interface EditorState {
  values: Record<string, unknown>;
  raw?: Record<string, string>;
  sample: string;
  errors?: FieldErrors;
  preview: Awaited<ReturnType<typeof previewOf>> | null;
  /** Set when another team shared the transform (with write access). */
  shared?: SharedBy;
}

/** The share a transform of another team is edited through; undefined for the team's own. */
async function sharedBy(
  s: Services,
  access: Access,
  ownerTeamId: string,
): Promise<SharedBy | undefined> {
  return access === "owner" ? undefined : { access, owner: await teamName(s, ownerTeamId) };
}

async function editorPage(
  c: Context<AppEnv>,
  user: UiUser,
  record: AnyRecord | null,
  state: EditorState,
) {
  const fields = fieldsOf("transforms", record === null);
  const errors = state.errors ?? new Map();
  const action = record ? `/transforms/${record.id}/edit` : "/transforms/new";
  return await c.html(
    <Layout
      title={record ? `Transform ${record.name}` : "New transform"}
      user={user}
      active="/transforms"
    >
      <h1>{record ? `Edit transform ${record.name}` : "New transform"}</h1>
      {state.shared && (
        <SharedNotice
          access={state.shared.access}
          owner={state.shared.owner}
          team={user.team.name}
        />
      )}
      <GeneralErrors errors={errors} />
      <form
        method="post"
        action={action}
        hx-post="/transforms/preview"
        hx-trigger="input changed delay:500ms from:textarea"
        hx-target="#preview"
        hx-select="#preview"
        hx-swap="outerHTML"
        data-testid="transform-form"
      >
        <Csrf token={user.session.csrf} />
        <div class="split">
          <div class="card">
            <Fields
              fields={fields}
              values={state.values}
              raw={state.raw}
              errors={errors}
              refs={{}}
            />
          </div>
          <div>
            <div class="card">
              <label for="f-sample">Sample input (JSON)</label>
              <textarea id="f-sample" name="sample" rows={14} class="mono" spellcheck={false}>
                {state.sample}
              </textarea>
              <div class="row">
                <label for="f-example" class="inline">Starter example</label>
                <select id="f-example" name="example">
                  {JOLT_EXAMPLES.map((e) => <option key={e.id} value={e.id}>{e.title}</option>)}
                </select>
                <button type="submit" name="op" value="example" class="secondary">Load</button>
              </div>
            </div>
            <PreviewPanel preview={state.preview} />
          </div>
        </div>
        <div class="row">
          <button type="submit" name="op" value="preview" class="secondary">Preview</button>
          <button type="submit" name="op" value="save">
            {record ? "Save" : "Create transform"}
          </button>
          <a href="/transforms">Cancel</a>
        </div>
      </form>
      {record && !state.shared && (
        <p>
          <a href={`/transforms/${record.id}/delete`}>Delete this transform…</a>
        </p>
      )}
    </Layout>,
    errors.size ? 422 : 200,
  );
}

/** Mounts the transform editor pages. */
export function mountTransformEditor(ui: Hono<AppEnv>, s: Services): void {
  const handle = async (
    c: Context<AppEnv>,
    user: UiUser,
    f: Record<string, string>,
    params: URLSearchParams,
    record: AnyRecord | null,
    shared?: SharedBy,
  ) => {
    const fields = fieldsOf("transforms", record === null);
    const parsed = parseForm(fields, params);
    const values = { ...(record ?? {}), ...parsed.body };
    if (f.op === "example") {
      const example = JOLT_EXAMPLES.find((e) => e.id === f.example) ?? JOLT_EXAMPLES[0];
      const sample = JSON.stringify(example.input, null, 2);
      const spec = JSON.stringify(example.spec, null, 2);
      return editorPage(c, user, record, {
        values: { ...values, spec: example.spec },
        raw: { ...parsed.raw, spec },
        sample,
        preview: await previewOf(s, spec, sample),
        shared,
      });
    }
    if (f.op !== "save") {
      return editorPage(c, user, record, {
        values,
        raw: parsed.raw,
        sample: f.sample ?? "",
        preview: await previewOf(s, f.spec ?? "", f.sample ?? ""),
        shared,
      });
    }
    const saved = await saveRecord(s, user, "transforms", record?.id ?? null, parsed, fields);
    if (saved.ok) return c.redirect(`/transforms/${saved.record.id}/edit`, 303);
    return editorPage(c, user, record, {
      values,
      raw: parsed.raw,
      sample: f.sample ?? "",
      errors: saved.errors,
      preview: f.sample ? await previewOf(s, f.spec ?? "", f.sample) : null,
      shared,
    });
  };

  ui.get(
    "/transforms/new",
    page(s, async (c, user) =>
      editorPage(c, user, null, {
        values: { spec: JOLT_EXAMPLES[0].spec },
        sample: JSON.stringify(JOLT_EXAMPLES[0].input, null, 2),
        preview: await previewOf(
          s,
          JSON.stringify(JOLT_EXAMPLES[0].spec),
          JSON.stringify(JOLT_EXAMPLES[0].input),
        ),
      })),
  );
  ui.post("/transforms/new", form(s, (c, user, f, params) => handle(c, user, f, params, null)));
  ui.get(
    "/transforms/:id/edit",
    page(s, async (c, user) => {
      const seen = await s.resources.visible("transforms", user.team.id, c.req.param("id")!);
      if (!seen) return notFoundPage(c, user, "transform");
      // Read-only: the record's page without a form (no field to type into, no Save).
      if (seen.access === "read") {
        return sharedRecordPage(c, s, user, "transforms", seen as Visible<AnyRecord>);
      }
      return editorPage(c, user, seen.record as AnyRecord, {
        values: seen.record as unknown as Record<string, unknown>,
        sample: "",
        preview: null,
        shared: await sharedBy(s, seen.access, seen.record.team_id),
      });
    }),
  );
  ui.post(
    "/transforms/:id/edit",
    form(s, async (c, user, f, params) => {
      const seen = await s.resources.visible("transforms", user.team.id, c.req.param("id")!);
      if (!seen) return notFoundPage(c, user, "transform");
      if (seen.access === "read") return readOnlyRefused(c, user, "transforms", seen.record.id);
      const shared = await sharedBy(s, seen.access, seen.record.team_id);
      return handle(c, user, f, params, seen.record as AnyRecord, shared);
    }),
  );
  // The live preview (htmx): the preview panel for the posted spec and sample; stores nothing.
  ui.post(
    "/transforms/preview",
    form(
      s,
      async (c, _user, f) =>
        c.html(<PreviewPanel preview={await previewOf(s, f.spec ?? "", f.sample ?? "")} />),
    ),
  );
}

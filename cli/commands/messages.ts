/**
 * `messages:search`, `messages:show`, `messages:replay`, `messages:resend` and
 * `messages:dead-letter` (a dead letter's content, or `--resend-file`: sent again edited): the
 * messages an instance tracks and its dead letters, through its management API (docs/operations.md,
 * "Search and replay"; docs/management-api.md, "Message tracking").
 * Content (`show --content`, `dead-letter`), replays and resends need a token with the operator
 * role.
 */
import type { Command } from "commander";
import { Buffer } from "node:buffer";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors.ts";
import { jsonObject } from "../http.ts";
import { describeInstance, prefixedUrl } from "../instances.ts";
import { ManagementClient } from "../management_client.ts";
import { renderTable } from "../table.ts";
import {
  addInstanceOptions,
  defineCommand,
  type InstanceOptions,
  onAction,
  selectInstance,
} from "./common.ts";

type Row = Record<string, unknown>;

/** Largest file `messages:resend --file` and `messages:dead-letter --resend-file` read. */
const MAX_RESEND_FILE = 64 * 1024 * 1024;

/** `2026-11-27T06:58:01.123Z` as `2026-11-27 06:58:01`. */
function when(value: unknown): string {
  return typeof value === "string" ? value.slice(0, 19).replace("T", " ") : "-";
}

/** The identifying metadata worth a column: the first of these a message has. */
function identity(metadata: Record<string, string>): string {
  for (
    const key of [
      "hl7.control_id",
      "dicom_instance_uid",
      "fhir.id",
      "patient_id",
      "dicom_patient_id",
      "delivery_id",
    ]
  ) {
    if (metadata[key]) return `${key}=${metadata[key]}`;
  }
  return "";
}

/** The `messages:search` table. */
export function renderMessages(messages: Row[], options: { color?: boolean } = {}): string {
  return renderTable(
    ["ID", "TIME (UTC)", "PIPELINE", "REQUEST", "STATUS", "MS", "BACKENDS", "IDENTITY"],
    messages.map((m) => [
      String(m.id),
      when(m.time),
      String(m.pipeline),
      `${m.method} ${m.path}`.slice(0, 48),
      `${m.status}${m.error_code ? ` ${m.error_code}` : ""}${m.replay_of ? " (replay)" : ""}`,
      Number(m.duration_ms),
      (m.backends as Row[] ?? []).map((b) => `${b.name}:${b.status ?? b.outcome}`).join(" "),
      identity((m.metadata ?? {}) as Record<string, string>),
    ]),
    options,
  );
}

/** A stage's body for a terminal: JSON and XML pretty-printed, DICOM as tags, binary as hex. */
export function renderStage(stage: Row): string {
  const head = [
    `── ${stage.stage}${stage.backend ? ` (${stage.backend})` : ""}` +
    `${stage.method ? ` ${stage.method} ${stage.path ?? ""}${stage.query ?? ""}` : ""}` +
    `${stage.status !== undefined ? ` → ${stage.status}` : ""}`,
    `   ${stage.content_type ?? "no content type"}, ${stage.size} bytes${
      stage.truncated ? " (kept cut)" : ""
    }`,
  ];
  const view = (stage.view ?? {}) as Row;
  switch (view.kind) {
    case "json": {
      let text = String(view.text);
      try {
        text = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // Shown as kept (a cut body is not whole JSON).
      }
      return [...head, text].join("\n");
    }
    case "xml":
      return [...head, prettyXml(String(view.text))].join("\n");
    case "text":
      return [...head, String(view.text).replace(/\r(?!\n)/g, "\n")].join("\n");
    case "dicom":
      return [
        ...head,
        renderTable(
          ["TAG", "KEYWORD", "VR", "VALUE"],
          (view.tags as Row[]).map((t) => [
            String(t.tag),
            String(t.keyword),
            String(t.vr),
            String(t.value),
          ]),
        ),
      ].join("\n");
    case "binary":
      return [...head, String(view.hex)].join("\n");
    default:
      return [...head, "(empty)"].join("\n");
  }
}

/** XML with one element per line, indented (enough to read a message, not a formatter). */
function prettyXml(xml: string): string {
  let depth = 0;
  return xml.replace(/>\s*</g, ">\n<").split("\n").map((line) => {
    if (/^<\//.test(line)) depth = Math.max(0, depth - 1);
    const out = "  ".repeat(depth) + line;
    if (/^<[^!?/][^>]*[^/]>$/.test(line) && !/<\/[^>]+>$/.test(line)) depth++;
    return out;
  }).join("\n");
}

/** Registers the `messages:*` commands. */
export function registerMessageCommands(program: Command, ctx: CliContext): void {
  const connect = async (options: InstanceOptions) => {
    const { instance } = await selectInstance(ctx, options);
    return new ManagementClient(ctx.http, instance, ctx.env);
  };
  const call = async (
    client: ManagementClient,
    method: string,
    route: string,
    json?: unknown,
  ): Promise<Row> => {
    const res = await client.send(method, prefixedUrl(client.instance, route), json);
    if (res.status !== 200) {
      throw client.failure(
        `${method} /${client.instance.prefix}/${route.split("?")[0]}`,
        res,
        res.status === 403
          ? "Content and replays need a management token with the operator role " +
            '(docs/management-api.md, "Roles").'
          : undefined,
      );
    }
    return jsonObject(res, client.peer);
  };

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "messages:search",
        "Search an instance's tracked messages (newest first; or --json)",
      ),
    )
      .option("--from <TIME>", "from this time (ISO 8601)")
      .option("--to <TIME>", "until this time (ISO 8601)")
      .option("--pipeline <NAME>", "one pipeline")
      .option("--endpoint <NAME>", "one endpoint")
      .option("--status <STATUS>", "404, 4xx, error or ok")
      .option(
        "--field <KEY=VALUE>",
        "a metadata field or alias (patient_id, accession, study_uid, control_id…); repeatable",
        (v: string, all: string[] = []) => [...all, v],
      )
      .option("--limit <N>", "messages per page (1-500)", "50")
      .option("--cursor <CURSOR>", "the next page (printed under a full page)")
      .option("--json", "print the raw JSON answer"),
    ctx,
    async (
      options: InstanceOptions & {
        from?: string;
        to?: string;
        pipeline?: string;
        endpoint?: string;
        status?: string;
        field?: string[];
        limit?: string;
        cursor?: string;
        json?: boolean;
      },
    ) => {
      const q = new URLSearchParams();
      for (
        const k of ["from", "to", "pipeline", "endpoint", "status", "limit", "cursor"] as const
      ) {
        if (options[k]) q.set(k, options[k]!);
      }
      for (const f of options.field ?? []) {
        const eq = f.indexOf("=");
        if (eq <= 0) throw new CliError(`--field ${f}: write it as KEY=VALUE`);
        q.set(`field.${f.slice(0, eq)}`, f.slice(eq + 1));
      }
      const client = await connect(options);
      const body = await call(client, "GET", `tracking/messages?${q}`);
      if (options.json) {
        ctx.out.print(JSON.stringify(body, null, 2));
        return;
      }
      const messages = Array.isArray(body.messages) ? body.messages as Row[] : [];
      if (messages.length === 0) {
        ctx.out.info(`No tracked message matches on ${describeInstance(client.instance)}.`);
        return;
      }
      ctx.out.print(renderMessages(messages, { color: ctx.out.color }));
      if (body.next_cursor) ctx.out.info(`More: --cursor ${body.next_cursor}`);
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "messages:show",
        "Show one tracked message (--content: each stage's content, operators only)",
      ).argument("<ID>", "the message's id (from messages:search)"),
    )
      .option("--content", "decrypt and show each stage (audited)")
      .option("--json", "print the raw JSON answer"),
    ctx,
    async (options: InstanceOptions & { content?: boolean; json?: boolean }, args: string[]) => {
      const client = await connect(options);
      const body = await call(
        client,
        "GET",
        `tracking/messages/${encodeURIComponent(args[0])}${options.content ? "?content=1" : ""}`,
      );
      if (options.json) {
        ctx.out.print(JSON.stringify(body, null, 2));
        return;
      }
      ctx.out.print(renderMessages([body], { color: ctx.out.color }));
      const meta = (body.metadata ?? {}) as Record<string, string>;
      ctx.out.print(
        renderTable(["METADATA", "VALUE"], Object.entries(meta).map(([k, v]) => [k, v]), {
          color: ctx.out.color,
        }),
      );
      if (body.content_error) ctx.out.info(`Content: ${body.content_error}`);
      for (const stage of (body.content ?? []) as Row[]) ctx.out.print(renderStage(stage));
      if (!options.content && (body.stages as unknown[] ?? []).length) {
        ctx.out.info(`Kept: ${(body.stages as string[]).join(", ")} (see them with --content)`);
      }
    },
  );

  const outcome = (client: ManagementClient, body: Row) => {
    ctx.out.print(
      `${body.status}${body.error_code ? ` ${body.error_code}` : ""} from ${
        (body.backends as string[] ?? []).join(", ")
      } on ${describeInstance(client.instance)} (request id ${body.request_id}).`,
    );
    if (body.body_preview) ctx.out.print(String(body.body_preview));
  };

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "messages:replay",
        "Send a tracked message through its pipeline again (operators; audited)",
      ).argument("<ID>", "the message's id"),
    ).option("--backend <NAME>", "only this backend of the pipeline"),
    ctx,
    async (options: InstanceOptions & { backend?: string }, args: string[]) => {
      const client = await connect(options);
      const body = await call(
        client,
        "POST",
        `tracking/messages/${encodeURIComponent(args[0])}/replay`,
        options.backend ? { backend: options.backend } : {},
      );
      outcome(client, body);
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "messages:resend",
        "Send a tracked message again with an edited body from a file (operators; audited)",
      ).argument("<ID>", "the message's id"),
    )
      .requiredOption("--file <PATH>", "the edited body")
      .option("--content-type <TYPE>", "its content type (default: the received one)")
      .option("--backend <NAME>", "only this backend of the pipeline"),
    ctx,
    async (
      options: InstanceOptions & { file: string; contentType?: string; backend?: string },
      args: string[],
    ) => {
      const bytes = await readBodyFile(options.file);
      const client = await connect(options);
      const body = await call(
        client,
        "POST",
        `tracking/messages/${encodeURIComponent(args[0])}/resend`,
        {
          body_base64: Buffer.from(bytes).toString("base64"),
          ...(options.contentType ? { content_type: options.contentType } : {}),
          ...(options.backend ? { backend: options.backend } : {}),
        },
      );
      outcome(client, body);
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "messages:dead-letter",
        "Show a queued backend's dead letter with its content, or resend it edited (operators; audited)",
      )
        .argument("<BACKEND>", "the queued backend")
        .argument("<ID>", "the delivery id (from gateway:queue-messages --dead)"),
    )
      .option(
        "--resend-file <PATH>",
        "send it again with this file as its body (a new message; the dead letter goes)",
      )
      .option(
        "--content-type <TYPE>",
        "with --resend-file: its content type (default: the stored one)",
      )
      .option("--json", "print the raw JSON answer"),
    ctx,
    async (
      options: InstanceOptions & { json?: boolean; resendFile?: string; contentType?: string },
      args: string[],
    ) => {
      const route = `queues/${encodeURIComponent(args[0])}/messages/${encodeURIComponent(args[1])}`;
      if (options.contentType !== undefined && options.resendFile === undefined) {
        throw new CliError("--content-type goes with --resend-file");
      }
      if (options.resendFile !== undefined) {
        const bytes = await readBodyFile(options.resendFile);
        const client = await connect(options);
        const body = await call(client, "POST", `${route}/resend`, {
          body_base64: Buffer.from(bytes).toString("base64"),
          ...(options.contentType ? { content_type: options.contentType } : {}),
        });
        if (options.json) {
          ctx.out.print(JSON.stringify(body, null, 2));
          return;
        }
        ctx.out.print(
          `Dead letter ${body.resent} of ${body.backend} sent again as delivery ${body.delivery_id} ` +
            `on ${describeInstance(client.instance)}.`,
        );
        return;
      }
      const client = await connect(options);
      const body = await call(client, "GET", `${route}/content`);
      if (options.json) {
        ctx.out.print(JSON.stringify(body, null, 2));
        return;
      }
      ctx.out.print(
        `${body.id} (${body.state}) ${body.method} ${body.path}${body.query ?? ""}: ` +
          `${body.attempts} attempt(s), last error: ${body.last_error ?? "-"}`,
      );
      ctx.out.print(renderStage({ stage: "queued", ...body }));
    },
  );
}

/** A file's bytes for an edited body (at most the API's limit). */
async function readBodyFile(path: string): Promise<Uint8Array> {
  try {
    const info = await Deno.stat(path);
    if (info.size > MAX_RESEND_FILE) throw new CliError(`${path}: over ${MAX_RESEND_FILE} bytes`);
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

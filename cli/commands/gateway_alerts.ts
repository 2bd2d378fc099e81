/**
 * `gateway:alerts` (alias `alerts`): an instance's alerts through its management API
 * (`GET /{prefix}/alerts`, docs/operations.md "Alerts"): the ones firing now, the latest resolved
 * ones (`--all`), and each channel's figures; `--json` prints the answer as it came.
 */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { jsonObject } from "../http.ts";
import { prefixedUrl } from "../instances.ts";
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

/** An ISO time as `2026-11-27 06:58` (UTC), or `-`. */
function when(value: unknown): string {
  return typeof value === "string" && value.length >= 16
    ? value.slice(0, 16).replace("T", " ")
    : "-";
}

/** The alerts table: state, severity, rule, kind, since, resolved, summary. */
export function renderAlerts(alerts: Row[], options: { color?: boolean } = {}): string {
  return renderTable(
    ["STATE", "SEVERITY", "RULE", "KIND", "SINCE (UTC)", "RESOLVED (UTC)", "SUMMARY"],
    alerts.map((a) => [
      String(a.status),
      String(a.severity),
      String(a.rule),
      String(a.kind),
      when(a.since),
      when(a.resolved_at),
      String(a.summary).slice(0, 120),
    ]),
    options,
  );
}

/** The channels table: name, type, queued, sent, failed, dropped, last error. */
export function renderChannels(channels: Row[], options: { color?: boolean } = {}): string {
  return renderTable(
    ["CHANNEL", "TYPE", "QUEUED", "SENT", "FAILED", "DROPPED", "LAST ERROR"],
    channels.map((c) => [
      String(c.name),
      String(c.type),
      Number(c.queued),
      Number(c.sent),
      Number(c.failed),
      Number(c.dropped),
      c.last_error ? `${when(c.last_error_at)} ${String(c.last_error).slice(0, 80)}` : "-",
    ]),
    options,
  );
}

/** Registers `gateway:alerts`. */
export function registerAlertCommands(program: Command, ctx: CliContext): void {
  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "gateway:alerts",
        "Show an instance's alerts firing now (--all: and the resolved ones; or --json)",
      ).alias("alerts"),
    )
      .option("--all", "list the recently resolved alerts too")
      .option("--json", "print the raw JSON answer"),
    ctx,
    async (options: InstanceOptions & { all?: boolean; json?: boolean }) => {
      const { instance } = await selectInstance(ctx, options);
      const client = new ManagementClient(ctx.http, instance, ctx.env);
      const res = await client.send("GET", prefixedUrl(instance, "alerts"));
      if (res.status !== 200) throw client.failure(`GET /${instance.prefix}/alerts`, res);
      const body = jsonObject(res, client.peer);
      if (options.json) {
        ctx.out.print(JSON.stringify(body, null, 2));
        return;
      }
      if (body.enabled !== true) {
        ctx.out.info("The instance evaluates no alerts ([alerts] is absent or disabled).");
        return;
      }
      const active = Array.isArray(body.active) ? body.active as Row[] : [];
      const recent = Array.isArray(body.recent) ? body.recent as Row[] : [];
      const shown = options.all ? [...active, ...recent] : active;
      if (shown.length === 0) {
        ctx.out.info(options.all ? "No alert fired yet." : "No alert is firing.");
      } else {
        ctx.out.print(renderAlerts(shown, { color: ctx.out.color }));
      }
      const channels = Array.isArray(body.channels) ? body.channels as Row[] : [];
      if (channels.length) ctx.out.print(renderChannels(channels, { color: ctx.out.color }));
    },
  );
}

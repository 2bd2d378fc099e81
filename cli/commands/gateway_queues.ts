/**
 * `gateway:queues`, `gateway:queue-messages`, `gateway:queue-retry`, `gateway:queue-purge`: an
 * instance's delivery queues through its management API (docs/delivery.md).
 */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors.ts";
import { describeInstance } from "../instances.ts";
import { ManagementClient } from "../management_client.ts";
import { confirm } from "../prompt.ts";
import { renderTable } from "../table.ts";
import {
  addInstanceOptions,
  addYesOption,
  defineCommand,
  type InstanceOptions,
  onAction,
  selectInstance,
} from "./common.ts";

type Row = Record<string, unknown>;

/** Seconds as `42s`, `7m`, `3h`, `2d`. */
function age(seconds: number): string {
  if (!(seconds > 0)) return "-";
  if (seconds < 120) return `${Math.round(seconds)}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** The `gateway:queues` table. */
export function renderQueues(queues: Row[], options: { color?: boolean } = {}): string {
  return renderTable(
    ["BACKEND", "WAITING", "IN FLIGHT", "RETRYING", "DEAD", "OLDEST", "DELIVERED"],
    queues.map((q) => [
      String(q.backend),
      Number(q.depth),
      Number(q.in_flight),
      Number(q.retrying),
      Number(q.dead),
      age(Number(q.oldest_age_secs)),
      Number(q.delivered_total),
    ]),
    options,
  );
}

/** Registers the queue commands. */
export function registerQueueCommands(program: Command, ctx: CliContext): void {
  const client = async (options: InstanceOptions) =>
    new ManagementClient(ctx.http, (await selectInstance(ctx, options)).instance, ctx.env);

  onAction(
    addInstanceOptions(
      defineCommand(program, "gateway:queues", "Show an instance's delivery queues (or --json)"),
    ).option("--json", "print the raw JSON answer"),
    ctx,
    async (options: InstanceOptions & { json?: boolean }) => {
      const body = await (await client(options)).queues();
      if (options.json) {
        ctx.out.print(JSON.stringify(body, null, 2));
        return;
      }
      const queues = Array.isArray(body.queues) ? body.queues as Row[] : [];
      if (queues.length === 0) {
        ctx.out.info("The instance has no delivery queues ([backends.<name>.queue]).");
        return;
      }
      ctx.out.print(renderQueues(queues, { color: ctx.out.color }));
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "gateway:queue-messages",
        "List the messages waiting in a backend's queue (--dead: its dead letters)",
      ).argument("<BACKEND>", "backend name").option("--dead", "list the dead letters"),
    ),
    ctx,
    async (options: InstanceOptions & { dead?: boolean }, args: string[]) => {
      const body = await (await client(options)).queueMessages(
        args[0],
        options.dead ? "dead" : "ready",
      );
      const messages = Array.isArray(body.messages) ? body.messages as Row[] : [];
      if (messages.length === 0) {
        ctx.out.info(options.dead ? "No dead letters." : "No message is waiting.");
        return;
      }
      ctx.out.print(renderTable(
        ["ID", "ACCEPTED", "REQUEST", "ATTEMPTS", "LAST ERROR"],
        messages.map((m) => [
          String(m.id),
          String(m.accepted_at ?? ""),
          `${m.method ?? ""} ${m.path ?? ""}`,
          Number(m.attempts ?? 0),
          String(m.last_error ?? "").slice(0, 60),
        ]),
        { color: ctx.out.color },
      ));
    },
  );

  onAction(
    addInstanceOptions(
      defineCommand(
        program,
        "gateway:queue-retry",
        "Send a backend's dead letters again (all, or --message ID)",
      ).argument("<BACKEND>", "backend name").option("--message <ID>", "one dead letter"),
    ),
    ctx,
    async (options: InstanceOptions & { message?: string }, args: string[]) => {
      const c = await client(options);
      const body = await c.queueRetry(args[0], options.message);
      ctx.out.print(
        `Requeued ${body.requeued} dead letter(s) of ${args[0]} on ${
          describeInstance(c.instance)
        }.`,
      );
    },
  );

  onAction(
    addYesOption(
      addInstanceOptions(
        defineCommand(
          program,
          "gateway:queue-purge",
          "Delete every dead letter of a backend's queue (asks first; -y/--yes does not)",
        ).argument("<BACKEND>", "backend name"),
      ),
      "confirm the deletion without asking",
    ),
    ctx,
    async (options: InstanceOptions & { yes?: boolean }, args: string[]) => {
      // A terminal is asked; a script must say -y/--yes (there is nobody to ask).
      const confirmed = options.yes === true ||
        (ctx.prompter.interactive &&
          await confirm(ctx.prompter, `Delete every dead letter of ${args[0]}?`));
      if (!confirmed) {
        throw new CliError(`purging deletes every dead letter of ${args[0]}`, {
          hint: `Run it again with -y (--yes), or look first: gwcli gateway:queue-messages ${
            args[0]
          } --dead`,
        });
      }
      const c = await client(options);
      const body = await c.queuePurge(args[0]);
      ctx.out.print(
        `Deleted ${body.purged} dead letter(s) of ${args[0]} on ${describeInstance(c.instance)}.`,
      );
    },
  );
}

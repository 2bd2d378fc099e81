/** `config:set`, `config:get`, `config:unset`: `config.json` (key `api-url`). */
import type { Command } from "commander";
import {
  CONFIG_KEYS,
  describeSource,
  parseConfigKey,
  resolveConfigValue,
  validateConfigValue,
  writeConfigFile,
} from "../config.ts";
import type { CliContext } from "../context.ts";
import { renderTable } from "../table.ts";
import { defineCommand, onAction } from "./common.ts";

/** Registers the config commands. */
export function registerConfigCommands(program: Command, ctx: CliContext): void {
  onAction(
    defineCommand(program, "config:set", "Set a configuration value (key: api-url)")
      .argument("<KEY>", `configuration key (${CONFIG_KEYS.join(", ")})`)
      .argument("<VALUE>", "value; api-url must start with http:// or https://"),
    ctx,
    async (_options, [rawKey, rawValue]) => {
      const key = parseConfigKey(rawKey);
      const value = validateConfigValue(key, rawValue);
      const file = await ctx.config();
      await writeConfigFile(ctx.paths.config, { ...file, [key]: value });
      ctx.out.info(`${key} = ${value} (saved in ${ctx.paths.config})`);
    },
  );

  onAction(
    defineCommand(program, "config:get", "Show one configuration value, or all of them")
      .argument("[KEY]", "configuration key; all keys when left out"),
    ctx,
    async (_options, [rawKey]) => {
      const file = await ctx.config();
      if (rawKey !== undefined) {
        const key = parseConfigKey(rawKey);
        const resolved = resolveConfigValue(key, file, ctx.env, ctx.paths.config);
        ctx.out.print(resolved.value);
        ctx.out.debug(1, `${key} comes from the ${describeSource(key, resolved.source)}`);
        return;
      }
      const rows = CONFIG_KEYS.map((key) => {
        const r = resolveConfigValue(key, file, ctx.env, ctx.paths.config);
        return [key, r.value, describeSource(key, r.source)];
      });
      ctx.out.print(renderTable(["KEY", "VALUE", "SOURCE"], rows, { color: ctx.out.color }));
    },
  );

  onAction(
    defineCommand(program, "config:unset", "Remove a value: the environment or default applies")
      .argument("<KEY>", "configuration key"),
    ctx,
    async (_options, [rawKey]) => {
      const key = parseConfigKey(rawKey);
      const file = await ctx.config();
      const wasSet = file[key] !== undefined;
      const { [key]: _removed, ...rest } = file;
      if (wasSet) await writeConfigFile(ctx.paths.config, rest);
      const now = resolveConfigValue(key, rest, ctx.env, ctx.paths.config);
      ctx.out.info(
        `${
          wasSet ? `Removed ${key} from the config file` : `${key} was not set in the config file`
        }; ` +
          `it is now ${now.value} (${describeSource(key, now.source)}).`,
      );
    },
  );
}

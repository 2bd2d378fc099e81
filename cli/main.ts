/**
 * The gwcli executable: `deno task gwcli <command> …` or a `deno compile`d `gwcli`.
 * Everything it does is documented in docs/cli.md.
 */
import { processEnv } from "./env.ts";
import { processSinks } from "./output.ts";
import { runCli } from "./program.ts";

if (import.meta.main) {
  const color = Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR");
  const code = await runCli(Deno.args, { env: processEnv, sinks: processSinks, color });
  Deno.exit(code);
}

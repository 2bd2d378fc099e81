/**
 * The gwcli executable: `deno task gwcli <command> …` or a `deno compile`d `gwcli`.
 * Everything it does is documented in docs/cli.md.
 */
import { processEnv } from "./env.ts";
import { openKeychain } from "./keychain.ts";
import { PROBE_ARGUMENT, runKeychainProbe } from "./keychain_probe.ts";
import { processSinks } from "./output.ts";
import { runCli } from "./program.ts";

if (import.meta.main && Deno.args[0] === PROBE_ARGUMENT) {
  // gwcli started by itself to check the keychain from a second process (keychain_probe.ts).
  const read = async (service: string, account: string) =>
    await (await openKeychain(service, account)).read();
  Deno.exit(await runKeychainProbe(Deno.args.slice(1), read));
} else if (import.meta.main) {
  const color = Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR");
  const terminal = Deno.stderr.isTerminal();
  const code = await runCli(Deno.args, { env: processEnv, sinks: processSinks, color, terminal });
  Deno.exit(code);
}

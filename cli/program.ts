/** The gwcli program: commander setup, global options, and running one command line. */
import { Command, CommanderError } from "commander";
import { registerCommands } from "./commands/mod.ts";
import { addGlobalOptions } from "./commands/mod.ts";
import { CliContext, type CliDeps } from "./context.ts";
import { API_URL_ENV } from "./config.ts";
import { CliError, EXIT } from "./errors.ts";
import { GWCLI_VERSION } from "./version.ts";

const ENVIRONMENT_HELP = `
Environment:
  GATEWAY_API_URL       cloud service URL when config.json sets no api-url (default http://localhost:8000)
  GWCLI_HOME            data directory instead of ~/.gwcli
  GWCLI_SECURE_STORE    auto (keychain, else age file), keychain or file
  GWCLI_API_TOKEN       a cloud API token (gwc_...) for CI: token:get, gateway:authorize and
                        api-token:* use it instead of the login (or --token-file FILE)
  GWCLI_MANAGEMENT_TOKEN  the gateway management token (else gateway:add --token-file or discovery)
  GWCLI_ENCRYPTION_KEY  age identity (AGE-SECRET-KEY-1...) of the encrypted token file
  GWCLI_RELEASE_URL     base URL of releases (gateway:install, self-update)
  GWCLI_RELEASE_PUBLIC_KEY  the release signing keys you pin (base64 Ed25519, comma-separated)
  BROWSER, GWCLI_NO_BROWSER  which browser login opens, or none

Exit codes: 0 ok, 1 failure, 2 usage error, 3 not logged in or token invalid (run gwcli login).
Documentation: docs/cli.md`;

/** Builds the commander program of one run. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command("gwcli")
    .description("Command-line client of the gateway and its cloud service")
    .version(GWCLI_VERSION, "-V, --version", "print the gwcli version")
    .helpOption("-h, --help", "show help")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.out.stdout(text),
      writeErr: (text) => ctx.out.stderr(text),
    })
    .showHelpAfterError("(run gwcli --help, or gwcli <command> --help)")
    .addHelpText("after", ENVIRONMENT_HELP.replace("GATEWAY_API_URL", API_URL_ENV));
  addGlobalOptions(program);
  registerCommands(program, ctx);
  return program;
}

/** Commander outcomes that are not failures. */
const SUCCESS_CODES = new Set(["commander.helpDisplayed", "commander.version"]);

/** Runs one command line; resolves with the exit code. */
export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  const ctx = new CliContext(deps);
  try {
    const program = buildProgram(ctx);
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // `gwcli help` ends with commander.help and exit code 0; `gwcli` alone (help to stderr), 1.
      const helped = err.code === "commander.help" && err.exitCode === 0;
      return SUCCESS_CODES.has(err.code) || helped ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CliError) {
      ctx.out.error(err.message);
      if (err.hint) ctx.out.stderr(`${err.hint}\n`);
      return err.exitCode;
    }
    ctx.out.error(`unexpected failure: ${(err as Error)?.message ?? err}`);
    ctx.out.debug(1, (err as Error)?.stack ?? "");
    if (ctx.out.verbosity === 0) ctx.out.stderr("(run again with -v for details)\n");
    return EXIT.failure;
  }
}

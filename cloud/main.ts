/**
 * The `cloud` executable (`deno task cloud`): `serve` (default), `user:create`, `keys:rotate`.
 * Flags and environment variables: see USAGE (`cloud --help`).
 */
import { parseCommandLine, resolveOptions, USAGE } from "./options.ts";
import { startCloud } from "./server.ts";
import { createServices } from "./services.ts";
import { createUser, newUser } from "./users.ts";
import { openKv, StoreError } from "./store/mod.ts";
import { createApiToken, isLoopbackHostname } from "./auth/mod.ts";
import type { Services } from "./services.ts";

/** Standard input as text (the password of `user:create --password-stdin`). */
async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Runs one command; returns the exit code. */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(args);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  if (parsed.command === "help") {
    console.log(USAGE);
    return 0;
  }
  if (parsed.options.passwordIterations !== undefined) {
    console.error(
      "warning: CLOUD_TEST_PBKDF2_ITERATIONS is set: password hashes are weaker than OWASP's count",
    );
  }
  if (parsed.command === "serve") {
    let server;
    try {
      server = await startCloud(parsed.options);
    } catch (err) {
      console.error(`cloud: cannot start: ${(err as Error).message}`);
      return 1;
    }
    const bound = server.services.options.hostname;
    const reach = bound === "0.0.0.0" || bound === "::"
      ? ", every address"
      : isLoopbackHostname(bound)
      ? ", this machine only"
      : "";
    const address = bound.includes(":") ? `[${bound}]` : bound;
    console.error(
      `cloud service on ${server.url} (listening on ${address}:${server.port}${reach})`,
    );
    const stop = () => {
      server.stop().then(() => Deno.exit(0));
    };
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    return await new Promise<number>(() => {});
  }
  const options = resolveOptions(parsed.options);
  const kv = await openKv(options);
  const shutdown = new AbortController();
  try {
    const s = await createServices(options, kv, shutdown.signal);
    if (parsed.command === "keys:rotate") {
      const next = await s.keys.rotate();
      console.log(
        `published signing key ${next.kid}; it signs from ${next.activates_at} ` +
          "(old keys stay published until their tokens expire)",
      );
      return 0;
    }
    if (parsed.command === "token:create") return await tokenCreate(s, parsed.user);
    const password = parsed.user.passwordStdin
      ? (await readStdin()).replace(/\r?\n$/, "")
      : Deno.env.get("CLOUD_USER_PASSWORD");
    if (!password) {
      console.error("user:create: set CLOUD_USER_PASSWORD or pass --password-stdin");
      return 2;
    }
    const input = newUser.safeParse({
      email: parsed.user.email,
      name: parsed.user.name ?? parsed.user.email?.split("@")[0],
      password,
      team: parsed.user.team,
    });
    if (!input.success) {
      for (const issue of input.error.issues) {
        console.error(`user:create: ${issue.path.join(".")}: ${issue.message}`);
      }
      return 2;
    }
    try {
      const { user, team } = await createUser(s, input.data);
      console.log(`created user ${user.email} (${user.id}) in team "${team.name}" (${team.id})`);
      return 0;
    } catch (err) {
      if (err instanceof StoreError) {
        console.error(`user:create: ${err.message}`);
        return 1;
      }
      throw err;
    }
  } finally {
    shutdown.abort();
    kv.close();
  }
}

/** `token:create`: an API token for a user, created by the operator beside the service. */
async function tokenCreate(
  s: Services,
  flags: { email?: string; name?: string; team?: string; expiresInDays?: number },
): Promise<number> {
  if (!flags.email || !flags.name) {
    console.error("token:create: --email and --name are required");
    return 2;
  }
  const user = await s.store.identity.userByEmail(flags.email);
  if (!user) {
    console.error(`token:create: no user ${flags.email}`);
    return 1;
  }
  const teams = await s.store.identity.teamsOf(user.id);
  const member = flags.team ? teams.find((t) => t.team.name === flags.team) : teams[0];
  if (!member) {
    console.error(
      `token:create: ${flags.email} is not in team ${JSON.stringify(flags.team ?? "")}`,
    );
    return 1;
  }
  const { token, record } = await createApiToken(s, {
    userId: user.id,
    teamId: member.team.id,
    name: flags.name,
    expiresInDays: flags.expiresInDays ?? null,
  }, { type: "system", id: "cloud-cli", label: "cloud token:create" });
  console.error(
    `created API token '${record.name}' (${record.id}) for ${user.email} in team ` +
      `"${member.team.name}"${record.expires_at ? `, expires ${record.expires_at}` : ""}; ` +
      "it is printed once, on stdout",
  );
  console.log(token);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));

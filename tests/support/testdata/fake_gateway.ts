/**
 * A stand-in for gateway/main.ts used by gateway_test.ts: reads `--config FILE`, serves
 * `GET /readyz` on the configured management port. FAKE_GATEWAY_MODE: `ready` (default),
 * `exit` (prints to stderr and exits 3), `never` (never becomes ready).
 */

import { parse } from "smol-toml";

const configPath = Deno.args[Deno.args.indexOf("--config") + 1];
const config = parse(await Deno.readTextFile(configPath)) as {
  management?: { port?: number };
};
const mode = Deno.env.get("FAKE_GATEWAY_MODE") ?? "ready";
if (mode === "exit") {
  console.error("fake gateway: config rejected on purpose");
  Deno.exit(3);
}
const server = Deno.serve(
  { hostname: "127.0.0.1", port: config.management?.port ?? 9090, onListen() {} },
  (request) =>
    new URL(request.url).pathname === "/readyz" && mode === "ready"
      ? new Response("ready")
      : new Response("not ready", { status: 503 }),
);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  Deno.exit(0);
});

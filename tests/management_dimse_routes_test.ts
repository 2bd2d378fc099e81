/**
 * `GET /admin/routes` of a running gateway lists its DIMSE listeners next to the HTTP routes, and
 * the address it lists is the one DCMTK `echoscu` reaches; after a reload that moves the listener
 * and changes its services, the listing follows.
 */
import { DCMTK_ENV } from "../fixtures/dicom/peers.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { freePort, requirePeer, runCommand, withManagementToken } from "./support/mod.ts";

interface Route {
  path: string;
  methods: string[];
  endpoint: string;
  service: string;
  pipeline: string;
  networks: string[];
  dimse?: Record<string, unknown>;
  served_by?: string;
  workers?: number;
  http3_networks?: string[];
}

function toml(port: number, store: boolean): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[endpoints.modalities]
service = "dicom_scp"
[endpoints.modalities.options]
local_aet = "GWROUTES"
bind_addr = "127.0.0.1"
port = ${port}
enable_find = true
enable_store = ${store}
allowed_calling_aets = ["ECHOSCU"]

[backends.echo]
service = "echo"

[pipelines.api]
endpoints = ["api"]
backends = ["echo"]

[pipelines.imaging]
endpoints = ["modalities"]
backends = ["echo"]
`;
}

async function routes(mgmt: string): Promise<Route[]> {
  const res = await fetch(`${mgmt}/admin/routes`, withManagementToken());
  assertEquals(res.status, 200);
  return ((await res.json()) as { routes: Route[] }).routes;
}

async function echo(port: number): Promise<number> {
  const r = await runCommand("echoscu", [
    "-aet",
    "ECHOSCU",
    "-aec",
    "GWROUTES",
    "127.0.0.1",
    String(port),
  ], {
    env: DCMTK_ENV,
  });
  return r.code;
}

Deno.test({
  name: "management routes list the DIMSE listener echoscu reaches, and follow a reload",
  ignore: !requirePeer("echoscu", "echoscu", "dcmtk"),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const first = freePort();
    const gw = await startTestGateway(toml(first, false));
    try {
      const listed = await routes(gw.mgmt);
      assertEquals(listed.map((r) => [r.endpoint, r.path]), [
        ["api", "/api"],
        ["modalities", `dimse://127.0.0.1:${first}`],
      ]);
      assertEquals(listed[1], {
        path: `dimse://127.0.0.1:${first}`,
        methods: ["C-ECHO", "C-FIND"],
        endpoint: "modalities",
        service: "dicom_scp",
        pipeline: "imaging",
        networks: [],
        served_by: "main_thread",
        workers: 1,
        dimse: {
          bind: "127.0.0.1",
          port: first,
          local_aet: "GWROUTES",
          services: ["echo", "find"],
          allowed_calling_aets: ["ECHOSCU"],
          storage_dir: null,
        },
      });
      assertEquals(await echo(first), 0, "the listed listener answers C-ECHO");

      const second = freePort();
      await gw.writeConfig(toml(second, true));
      const reload = await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }));
      assertEquals(reload.status, 200, await reload.clone().text());
      await reload.body?.cancel();
      const moved = (await routes(gw.mgmt)).find((r) => r.endpoint === "modalities");
      assert(moved, "the listener is still listed");
      assertEquals(moved.path, `dimse://127.0.0.1:${second}`);
      assertEquals(moved.methods, ["C-ECHO", "C-FIND", "C-STORE"]);
      assertEquals(await echo(second), 0, "the moved listener answers C-ECHO");
      assert((await echo(first)) !== 0, "the old address is closed");
    } finally {
      await gw.stop();
    }
  },
});

/**
 * Where a server allocates per request: V8's sampling heap profiler over the inspector protocol,
 * counting objects the young-generation and full collections freed too (the garbage is what we
 * look for), while this process sends requests. Prints the functions that allocate the most
 * bytes per request.
 *
 * `deno run -A bench/http_proxy/heap_profile.ts [--target gateway|minimal] [--requests N]
 * [--top N] [--depth N]` (`--depth N`: each function with its N nearest callers).
 */
import { parseArgs } from "node:util";
import { canConnect, freePort, spawnCaptured, waitReady } from "../../tests/support/mod.ts";
import { sendRequests } from "./allocation.ts";
import { fixedJsonBody } from "./report.ts";
import { gatewayConfig, startUpstream } from "./servers.ts";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  callFrame: CallFrame;
  selfSize: number;
  children: ProfileNode[];
}

/** A minimal inspector client: one request at a time. */
class Inspector {
  #ws: WebSocket;
  #id = 0;
  #waiting = new Map<number, (result: unknown) => void>();

  constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.id !== undefined) this.#waiting.get(msg.id)?.(msg.result ?? msg.error);
    };
  }

  static async connect(port: number): Promise<Inspector> {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const ws = new WebSocket(list[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    return new Inspector(ws);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = ++this.#id;
    this.#ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  close(): void {
    this.#ws.close();
  }
}

/** `function file:line` of a frame, the path relative to the repository. */
function place(f: CallFrame): string {
  const file = f.url.replace(/^.*\/work\/main\//, "").replace(
    /^file:\/\/.*?\/(gateway|shared|bench)\//,
    "$1/",
  );
  return `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
}

/**
 * Self sizes summed by function and place, with its `depth` nearest callers (` < ` between), so
 * the runtime's functions are told apart by who called them.
 */
function flatten(
  node: ProfileNode,
  out: Map<string, number>,
  depth: number,
  callers: string[] = [],
): void {
  const here = place(node.callFrame);
  const where = [here, ...(depth > 0 ? callers.slice(-depth).reverse() : [])].join(" < ");
  out.set(where, (out.get(where) ?? 0) + node.selfSize);
  for (const child of node.children) flatten(child, out, depth, [...callers, here]);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      target: { type: "string", default: "gateway" },
      requests: { type: "string", default: "20000" },
      top: { type: "string", default: "40" },
      depth: { type: "string", default: "0" },
    },
  });
  const upstream = await startUpstream(fixedJsonBody(1024));
  const inspectPort = freePort();
  const port = freePort();
  const dir = await Deno.makeTempDir();
  let args: string[];
  let url: string;
  if (values.target === "minimal") {
    args = [
      "bench/http_proxy/minimal_proxy.ts",
      "--client",
      "http1",
      "--upstream",
      upstream.url,
      "--port",
      String(port),
    ];
    url = `http://127.0.0.1:${port}/`;
  } else {
    await Deno.writeTextFile(`${dir}/gateway.toml`, gatewayConfig(port, freePort(), upstream.url));
    args = ["gateway/main.ts", "--config", `${dir}/gateway.toml`];
    url = `http://127.0.0.1:${port}/api/`;
  }
  const server = spawnCaptured(Deno.execPath(), [
    "run",
    "-A",
    "--unstable-net",
    "--unstable-no-legacy-abort",
    `--inspect=127.0.0.1:${inspectPort}`,
    "--v8-flags=--max-semi-space-size=2",
    ...args,
  ], { env: { GATEWAY_MANAGEMENT_TOKEN: "profile-token-0123456789abcdef0123456789" } });
  await waitReady(server, {
    name: values.target!,
    check: () => canConnect(port),
    description: "listening",
    timeoutMs: 60_000,
  });
  const requests = Number(values.requests);
  await sendRequests(url, 5_000);
  const inspector = await Inspector.connect(inspectPort);
  await inspector.call("HeapProfiler.enable");
  await inspector.call("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await sendRequests(url, requests);
  const { profile } = await inspector.call("HeapProfiler.stopSampling") as {
    profile: { head: ProfileNode };
  };
  inspector.close();
  const sizes = new Map<string, number>();
  flatten(profile.head, sizes, Number(values.depth));
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);
  console.log(`${values.target}: ~${(total / requests).toFixed(0)} bytes sampled per request`);
  for (
    const [where, bytes] of [...sizes].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))
  ) {
    console.log(`${(bytes / requests).toFixed(0).padStart(7)}  ${where}`);
  }
  await server.stop();
  await upstream.stop();
  await Deno.remove(dir, { recursive: true });
}

/**
 * The container image, checked without a container engine (none runs here): the Dockerfile's
 * instructions are read and checked (every COPY source exists, a non-root user, the published
 * port and the HEALTHCHECK's port are those of the image's default configuration, the entry
 * command is `deno task start`'s), and the exact entry command and HEALTHCHECK command are run on
 * this machine against that configuration (ports and data directory moved to free ones), down to
 * a SIGTERM that exits 0. compose.yaml builds the Dockerfile's targets.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { freePort, REPO_ROOT, waitFor } from "./support/mod.ts";
import { validateConfigText } from "../shared/gateway_config/mod.ts";

interface Instruction {
  stage: string;
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped), with their stage. */
async function dockerfile(): Promise<Instruction[]> {
  const text = (await Deno.readTextFile(`${REPO_ROOT}/Dockerfile`)).replace(/\\\n/g, " ");
  const out: Instruction[] = [];
  let stage = "";
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const [, keyword, args] = trimmed.match(/^(\w+)\s+(.*)$/)!;
    const upper = keyword.toUpperCase();
    if (upper === "FROM") stage = args.match(/\bAS\s+(\S+)/i)?.[1] ?? "";
    out.push({ stage, keyword: upper, args: args.trim() });
  }
  return out;
}

function inStage(all: Instruction[], stage: string, keyword: string): Instruction[] {
  return all.filter((i) => i.stage === stage && i.keyword === keyword);
}

const DEFAULT_CONFIG = `${REPO_ROOT}/deploy/container/gateway.toml`;

Deno.test("container: the Dockerfile's sources, user, ports, volumes and entry command", async () => {
  const all = await dockerfile();
  const stages = all.filter((i) => i.keyword === "FROM").map((i) => i.stage);
  assertEquals(stages, ["build", "base", "cloud", "gateway"]);
  // Every COPY from the build context names something that exists.
  for (const copy of all.filter((i) => i.keyword === "COPY" && !i.args.includes("--from"))) {
    const parts = copy.args.split(/\s+/).filter((p) => !p.startsWith("--"));
    for (const source of parts.slice(0, -1)) {
      assert(
        await Deno.stat(`${REPO_ROOT}/${source}`).then(() => true, () => false),
        `COPY ${source} exists`,
      );
    }
  }
  for (const stage of ["gateway", "cloud"]) {
    const user = inStage(all, stage, "USER");
    assertEquals(user.map((u) => u.args), ["gateway"], `${stage} runs as a user of its own`);
  }
  assertMatch(inStage(all, "base", "RUN")[0].args, /useradd --system --uid 10001/);

  const config = validateConfigText(await Deno.readTextFile(DEFAULT_CONFIG), "gateway.toml");
  assertEquals(config.problems, []);
  const c = config.config!;
  assertEquals(
    inStage(all, "gateway", "EXPOSE").map((e) => e.args),
    [String(c.network.main.port)],
    "the published port is the default configuration's data port",
  );
  const health = inStage(all, "gateway", "HEALTHCHECK")[0].args;
  assertMatch(health, new RegExp(`/dev/tcp/127\\.0\\.0\\.1/${c.management.port}\\b`));
  assertEquals(c.management.bind, "127.0.0.1");
  const volumes = JSON.parse(inStage(all, "gateway", "VOLUME")[0].args);
  assertEquals(volumes, ["/etc/gateway", "/var/lib/gateway"]);
  assert(c.cloud.state_dir!.startsWith("/var/lib/gateway/"), "state in the data volume");

  // The entry command is `deno task start` with the image's config file.
  const entry = JSON.parse(inStage(all, "gateway", "ENTRYPOINT")[0].args) as string[];
  const task = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)).tasks.start as string;
  // The task's leading VAR=value words are the environment (ENV in the image).
  const taskArgs = task.split(/\s+/).filter((a) => !/^[A-Z_]+=/.test(a));
  assertEquals(entry.slice(0, -2), taskArgs);
  assertEquals(entry.slice(-2), ["--config", "/etc/gateway/gateway.toml"]);
  assertMatch(inStage(all, "base", "ENV")[0].args, /MALLOC_MMAP_THRESHOLD_=65536/);

  // The cloud binds every address of the container: in development mode (a loopback base URL,
  // compose's default) it would listen on the container's 127.0.0.1 only, out of a port's reach.
  const cloudEntry = JSON.parse(inStage(all, "cloud", "ENTRYPOINT")[0].args) as string[];
  assertEquals(cloudEntry.slice(-2), ["--hostname", "0.0.0.0"]);

  const compose = await Deno.readTextFile(`${REPO_ROOT}/compose.yaml`);
  for (const target of ["gateway", "cloud"]) {
    assertMatch(compose, new RegExp(`target: ${target}\\b`));
  }
  assertMatch(compose, new RegExp(`"${c.network.main.port}:${c.network.main.port}"`));
});

Deno.test("container: the entry command and the HEALTHCHECK run here; SIGTERM exits 0", async () => {
  const all = await dockerfile();
  const entry = JSON.parse(inStage(all, "gateway", "ENTRYPOINT")[0].args) as string[];
  const health = JSON.parse(
    inStage(all, "gateway", "HEALTHCHECK")[0].args.replace(/^.*?CMD\s+/, ""),
  ) as string[];
  const dir = await Deno.makeTempDir({ prefix: "gw-container-" });
  const dataPort = freePort();
  const mgmtPort = freePort();
  // The image's configuration, on free ports and with its data directory here.
  const text = (await Deno.readTextFile(DEFAULT_CONFIG))
    .replace("port = 8080", `port = ${dataPort}`)
    .replace("port = 9090", `port = ${mgmtPort}`)
    .replaceAll("/var/lib/gateway", dir);
  await Deno.writeTextFile(`${dir}/gateway.toml`, text);
  const args = entry.slice(1).map((a) =>
    a === "/etc/gateway/gateway.toml" ? `${dir}/gateway.toml` : a
  );
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: REPO_ROOT,
    env: { MALLOC_MMAP_THRESHOLD_: "65536", DENO_NO_UPDATE_CHECK: "1" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  const reading = (async () => {
    for (;;) {
      const { done, value } = await stderr.read();
      if (done) return;
      log += value;
    }
  })();
  try {
    const check = health.map((a) =>
      a.replace("/dev/tcp/127.0.0.1/9090", `/dev/tcp/127.0.0.1/${mgmtPort}`)
    );
    await waitFor(async () => {
      const r = await new Deno.Command(check[0], {
        args: check.slice(1),
        stdout: "null",
        stderr: "null",
      })
        .output();
      return r.success;
    }, { timeoutMs: 30_000, description: `the HEALTHCHECK command passing (log: ${log})` });
    const echo = await fetch(`http://127.0.0.1:${dataPort}/echo/x`);
    assertEquals(echo.status, 200);
    await echo.body?.cancel();
    child.kill("SIGTERM");
    const status = await child.status;
    assertEquals(status.code, 0, log);
    await reading;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await Deno.remove(dir, { recursive: true });
  }
});

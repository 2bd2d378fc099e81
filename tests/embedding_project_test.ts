/**
 * docs/embedding.md, "Using it from your own project", run as written: a project in a directory
 * outside the checkout, with its own `deno.json` linking the checkout, imports
 * `@healthcare/gateway` and starts a gateway with worker threads; it serves, and SIGTERM ends it.
 * The first run in a fresh Deno cache downloads the gateway's npm packages from the registry.
 */
import { assert, assertEquals } from "./assert.ts";
import { freePort, removeDir, REPO_ROOT, spawnCaptured } from "./support/mod.ts";

/** The fenced blocks of `lang` between the `name` markers of `doc`. */
function blocks(doc: string, name: string, lang: string): string[] {
  const region = doc.match(
    new RegExp(`<!-- ${name}:begin[^\\n]*-->([\\s\\S]*?)<!-- ${name}:end -->`),
  );
  assert(region, `markers of ${name} missing`);
  return [...region[1].matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) =>
    m[1]
  );
}

Deno.test("docs/embedding.md: a project outside the checkout links it and runs a gateway", async () => {
  const doc = await Deno.readTextFile(`${REPO_ROOT}/docs/embedding.md`);
  const [denoJson] = blocks(doc, "embed-project", "json");
  const [program] = blocks(doc, "embed-project", "ts");
  const [shell] = blocks(doc, "embed-project", "sh");
  const link = JSON.parse(denoJson).links[0] as string;
  assertEquals(link, "../healthcare-gateway");

  // `my-app` beside `healthcare-gateway` (here a link to this checkout), both outside it.
  const dir = await Deno.makeTempDir({ prefix: "gw-embed-project-" });
  assert(!dir.startsWith(REPO_ROOT));
  const app = `${dir}/my-app`;
  await Deno.mkdir(app);
  await Deno.symlink(REPO_ROOT, `${dir}/healthcare-gateway`);
  const port = freePort();
  assert(program.includes("port: 8080"));
  await Deno.writeTextFile(`${app}/deno.json`, denoJson);
  await Deno.writeTextFile(`${app}/main.ts`, program.replace("port: 8080", `port: ${port}`));

  // Lines ended by a backslash go on, as in the shell.
  const words = shell.replaceAll("\\\n", " ").trim().split(/\s+/);
  assertEquals(words[0], "deno");
  const { promise: listening, resolve } = Promise.withResolvers<void>();
  let out = "";
  const run = spawnCaptured(Deno.execPath(), words.slice(1), {
    cwd: app,
    onStdout: (chunk) => {
      out += new TextDecoder().decode(chunk);
      if (out.includes("gateway listening")) resolve();
    },
  });
  let served = false;
  try {
    const exited = run.child.status.then((s) => {
      throw new Error(`the program exited (${s.code}) before it listened\n${run.output()}`);
    });
    await Promise.race([listening, exited]);
    // Every request is answered, whichever of the two isolates takes it.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/echo/x?i=${i}`);
      assertEquals(res.status, 200);
      assertEquals((await res.json()).query, { i: String(i) });
    }
    served = true;
  } finally {
    const status = await run.stop();
    await removeDir(dir);
    if (served) assertEquals(status.code, 0, run.output());
  }
});

/** The preview pool: workers, the deadline, the waiting limit, and the in-isolate fallback. */
import { assert, assertEquals, assertMatch } from "../../tests/assert.ts";
import { MAX_WAITING, PreviewLimitError, PreviewPool, runPreview } from "./mod.ts";

const SHIFT = [{ operation: "shift", spec: { a: "b" } }];
/**
 * A preview that runs to the JOLT step budget: 2,000 literal keys under `*` tried against 5,000
 * objects, about 150 ms on an idle machine, so a deadline of 20 ms stops it first. (Nothing a user
 * writes holds a preview longer: the budget ends every run, and a `split` separator that could
 * backtrack is a spec error. The deadline is the guard behind them.)
 */
const BUSY = [{
  operation: "shift",
  spec: {
    "*": Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, `out.k${i}`])),
  },
}];
const BUSY_INPUT = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`o${i}`, { x: i }]));

/** What `p` rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

Deno.test("preview pool: outcomes come back from a worker", async () => {
  const pool = new PreviewPool();
  try {
    assertEquals(await pool.run(SHIFT, { a: 1 }), { kind: "output", output: { b: 1 } });
    assertEquals(await pool.run([{ operation: "nope" }], {}), {
      kind: "problems",
      problems: [{
        field: "spec.0",
        message: 'JOLT spec operation 0: unknown operation "nope" (expected one of shift, ' +
          "default, remove, sort, cardinality, modify-overwrite-beta, modify-default-beta, " +
          "modify-define-beta)",
      }],
    });
    const over = await pool.run(
      [{ operation: "modify-overwrite-beta", spec: { l: "=squashDuplicates" } }],
      { l: Array.from({ length: 5_000 }, (_, i) => i) },
    );
    assertEquals([over.kind, over.kind === "budget" && over.limit], ["budget", 10_000_000]);
    assertEquals(pool.inIsolate, false);
  } finally {
    pool.close();
  }
});

Deno.test("preview pool: past the deadline the worker is terminated; the next preview gets a new one", async () => {
  // The pool's deadline is generous: a cold worker's first preview (JIT) must not hit it on a
  // loaded machine. BUSY alone gets 20 ms, against its ~150 ms of work.
  const pool = new PreviewPool({ deadlineMs: 60_000, workers: 1 });
  try {
    await pool.run(SHIFT, { a: 1 }); // the worker is up: the deadline times the preview only
    const err = await rejection(pool.run(BUSY, BUSY_INPUT, { deadlineMs: 20 }));
    assert(err instanceof PreviewLimitError);
    assertEquals([err.code, err.status, err.details], [
      "preview_deadline_exceeded",
      422,
      { deadline_ms: 20 },
    ]);
    assertEquals(await pool.run(SHIFT, { a: 2 }), { kind: "output", output: { b: 2 } });
  } finally {
    pool.close();
  }
});

Deno.test("preview pool: at most MAX_WAITING previews wait; more are refused with 503 preview_busy", async () => {
  const pool = new PreviewPool({ deadlineMs: 60_000, workers: 1 });
  const busy = pool.run(BUSY, BUSY_INPUT);
  const waiting = Array.from({ length: MAX_WAITING }, () => pool.run(SHIFT, { a: 1 }));
  const refused = await rejection(pool.run(SHIFT, { a: 1 }));
  assert(refused instanceof PreviewLimitError);
  assertEquals([refused.code, refused.status], ["preview_busy", 503]);
  // Closing ends the stuck worker and refuses what waits.
  const refusals = [busy, ...waiting].map(rejection);
  pool.close();
  for (const err of await Promise.all(refusals)) assertMatch(String(err), /closed|stopped/);
});

Deno.test("preview pool: where no worker can start (no read access to its module), previews run here", async () => {
  const script = `
    import { PreviewPool } from ${JSON.stringify(new URL("./mod.ts", import.meta.url).href)};
    const warnings = [];
    const pool = new PreviewPool({ logger: { warn: (m) => warnings.push(m) } });
    const out = await pool.run(${JSON.stringify(SHIFT)}, { a: 1 });
    pool.close();
    console.log(JSON.stringify({ out, inIsolate: pool.inIsolate, warnings }));
  `;
  const child = new Deno.Command(Deno.execPath(), {
    // The project's import map (the JOLT engine imports an npm package); still no read access.
    args: [
      "run",
      "--deny-read",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      "-",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const text = new TextDecoder().decode(stdout);
  assertEquals(code, 0, new TextDecoder().decode(stderr));
  const result = JSON.parse(text);
  assertEquals([result.out, result.inIsolate], [{ kind: "output", output: { b: 1 } }, true]);
  assertMatch(result.warnings[0], /previews run in the service's isolate/);
});

Deno.test("preview: a sample nested deeper than 128 levels is a problem of the input, not a stack overflow", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 30_000; i++) deep = [deep]; // 60 KB of JSON: within the body limit
  const outcome = runPreview([{ operation: "shift", spec: { "@": "out" } }], { a: deep });
  assertEquals(outcome.kind, "problems");
  assertMatch(JSON.stringify(outcome), /"field":"input".*nested deeper than 128 levels/);
  let shallow: unknown = 1;
  for (let i = 0; i < 127; i++) shallow = [shallow];
  assertEquals(runPreview(SHIFT, { a: shallow }), { kind: "output", output: { b: shallow } });
});

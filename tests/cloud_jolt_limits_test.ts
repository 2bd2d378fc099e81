/**
 * The cloud's JOLT preview against specs built to freeze or flood it: many-star keys (exponential
 * for a backtracking matcher, polynomial for a table of groups and positions), a far-out default
 * index (hundreds of megabytes of nulls), a spec nested 10,000 levels, work past the run's budget
 * and a regular expression that backtracks for seconds. Each is answered at once or within the
 * preview deadline, through the REST API, the MCP tool and the web UI, and `/healthz` keeps
 * answering in milliseconds meanwhile: previews run in a worker, not on the service's loop.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, type TestCloud, withCloud } from "./cloud_harness.ts";
import { connectMcp, errorText } from "./mcp_harness.ts";
import { keyProductAttack, manyStarAttack } from "./support/jolt.ts";
import { threadClock } from "./support/cpu_scaling.ts";
import { previewOf } from "../cloud/ui/transform_editor.tsx";
import { runPreview } from "../cloud/preview/run.ts";
import { resolveOptions } from "../cloud/options.ts";

/**
 * The CPU time, in milliseconds, this test's thread spends on `runPreview(spec, input)`: the work a
 * preview worker does for the request. A thread's CPU time counts neither a wait for a core on a
 * busy machine nor the test files running beside this one in the same process.
 */
function previewCpuMs(spec: unknown, input: unknown): { ms: number; outcome: unknown } {
  const clock = threadClock();
  try {
    const started = clock.ms();
    const outcome = runPreview(spec, input);
    return { ms: clock.ms() - started, outcome };
  } finally {
    clock.close();
  }
}

/**
 * Asks `/healthz` again and again, one after the other, while `work` runs, and checks every one
 * is answered 200: the service keeps serving beside a preview (that it is served while a preview
 * runs, rather than after, is proved by order in {@link assertServedMeanwhile}).
 */
async function withHealthzBeside<T>(cloud: TestCloud, work: () => Promise<T>): Promise<T> {
  let finished = false;
  const pending = work().finally(() => finished = true);
  while (!finished) {
    const res = await fetch(`${cloud.url}/healthz`);
    await res.body?.cancel();
    assertEquals(res.status, 200);
  }
  return await pending;
}

/**
 * Runs `work` (a preview that keeps a worker busy for some hundreds of milliseconds) and asks
 * `/healthz` again and again, one after the other, until the work's answer is in or `least` are
 * answered; asserts that at least `least` of those `/healthz` were answered before it. Work held
 * on the service's loop would hold every `/healthz` behind it (none, or the one already in,
 * answered first), whatever the machine's load: the proof is the order of answers, not a
 * duration.
 */
async function assertServedMeanwhile<T>(
  cloud: TestCloud,
  what: string,
  work: () => Promise<T>,
  check: (value: T, ms: number) => void,
  least = 5,
): Promise<void> {
  let finished = false;
  const started = performance.now();
  const pending = work().finally(() => finished = true);
  let before = 0;
  // Once `least` are in, more could not change the verdict: the loop (a core's worth of fetches)
  // ends there, and the work's answer is awaited.
  while (!finished && before < least) {
    const res = await fetch(`${cloud.url}/healthz`);
    await res.body?.cancel();
    assertEquals(res.status, 200);
    if (!finished) before++;
  }
  const value = await pending;
  check(value, performance.now() - started);
  assert(before >= least, `${what}: ${before} /healthz answered while the preview ran`);
}

/**
 * A spec whose regular expression would backtrack for seconds on 24 a's, uncounted by the budget:
 * a lookahead keeps it off V8's linear engine, so the JOLT engine refuses the separator as a spec
 * error (shared/jolt/engine/separator.ts).
 */
const BACKTRACKING = {
  spec: [{ operation: "modify-overwrite-beta", spec: { parts: "=split('(a+)+(?=b)', @(1,s))" } }],
  input: { s: "a".repeat(24) },
};

/**
 * A preview that runs to the step budget: 2,000 literal keys under `*` tried against 5,000
 * objects, about 150 ms on an idle machine (0.1-0.5 s, docs/transforms.md), so the deadline of the
 * test below stops it first.
 */
const SLOW = {
  spec: [{
    operation: "shift",
    spec: {
      "*": Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, `out.k${i}`])),
    },
  }],
  input: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`o${i}`, { x: i }])),
};

Deno.test("cloud preview: pathological JOLT specs are answered at once with a 4xx; the cloud stays responsive", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    const preview = (spec: unknown, input: unknown) =>
      call(cloud, "POST", "/api/transforms/preview", { token, body: { spec, input } });

    // About 1.2 KB: a 30-star key against a key that almost matches.
    const starKey = "*a".repeat(30) + "*b";
    const stars = preview([{ operation: "shift", spec: { [starKey]: "out" } }], {
      ["a".repeat(1_000)]: 1,
    });
    const other = call(cloud, "GET", "/api/me", { token });
    const [s, o] = await Promise.all([stars, other]);
    assertEquals(s.status, 200, s.text);
    assertEquals(s.json.output, null, "no key matches: nothing is shifted");
    assertEquals(o.status, 200);
    // At once: the preview's own work, in this thread's CPU time (a 30-star key is exponential for
    // a backtracking matcher: ages, not milliseconds).
    const starWork = previewCpuMs([{ operation: "shift", spec: { [starKey]: "out" } }], {
      ["a".repeat(1_000)]: 1,
    });
    assert(starWork.ms < 5_000, `answered at once (${starWork.ms.toFixed(0)} ms of CPU)`);

    const flood = await preview(
      [{ operation: "default", spec: { "items[]": { "99999999": 0 } } }],
      {},
    );
    assertEquals(flood.status, 422);
    assertMatch(flood.text, /array default index 99999999 is over the limit of 1000000/);
    assert(flood.text.length < 10_000, "no flood of nulls");

    let deep: unknown = "x";
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const nested = await preview([{ operation: "shift", spec: deep }], {});
    assertEquals([nested.status, nested.json.error.code], [400, "spec_too_large"], nested.text);
    assertMatch(nested.text, /nested deeper than 128 levels/);
    assertEquals((await call(cloud, "GET", "/api/me", { token })).status, 200);
  });
});

Deno.test("cloud preview: issue 33's 242 KB many-star preview is under 1 s of CPU and answers (API and MCP) while /healthz keeps answering", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    const preview = (body: unknown) =>
      call(cloud, "POST", "/api/transforms/preview", { token, body });
    // A first preview starts the worker, so the measurements below see previews only.
    assertEquals((await preview({ spec: [{ operation: "sort" }], input: {} })).status, 200);
    const attack = manyStarAttack();
    assert(JSON.stringify(attack).length > 240_000, "the size of the issue's request");

    // 35.6 s before (a table of 200 groups by 20,000 positions per try): now each of the 1,000
    // tries reads its key once, and no key has the `c` every spec key needs. Timed as the work
    // the preview worker does, in this thread's CPU time.
    const work = previewCpuMs(attack.spec, attack.input);
    assertEquals((work.outcome as { output?: unknown }).output, null);
    assert(work.ms < 1_000, `the many-star preview took ${work.ms.toFixed(0)} ms of CPU`);

    // Through the REST API and the MCP tool, with /healthz answered beside them. The preview
    // deadline is out of the way (below): the CPU time above is the bound, however loaded the
    // machine.
    const res = await withHealthzBeside(cloud, () => preview(attack));
    assertEquals([res.status, res.json.output], [200, null], res.text);
    const mcp = await connectMcp(cloud, token);
    try {
      const out = await withHealthzBeside(cloud, () => mcp.call("preview-transform", attack));
      assertEquals(out.output, null);
    } finally {
      await mcp.close();
    }
  }, { previewDeadlineMs: 60_000 }); // the CPU time above decides, not the deadline
});

Deno.test("cloud preview: work past the run's budget is 422 transform_budget_exceeded naming it (API and MCP)", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    // 12,000,000 tries of a one-star key against a key: over the 10,000,000 steps of one run.
    const attack = keyProductAttack();
    await assertServedMeanwhile(
      cloud,
      "REST preview over budget",
      () => call(cloud, "POST", "/api/transforms/preview", { token, body: attack }),
      (res) => {
        assertEquals(res.status, 422, res.text);
        assertEquals(res.json.error.code, "transform_budget_exceeded");
        assertEquals(res.json.error.budget_steps, 10_000_000);
        assertMatch(res.json.error.message, /operation 0 \(shift\).*more than 10000000 work steps/);
      },
    );

    const mcp = await connectMcp(cloud, token);
    try {
      const text = errorText(await mcp.raw("preview-transform", attack));
      assertMatch(text, /^transform_budget_exceeded: .*more than 10000000 work steps/);
    } finally {
      await mcp.close();
    }
  }, { previewDeadlineMs: 60_000 }); // the budget decides here, however loaded the machine
});

/**
 * The deadline of the test below: a configured one, far shorter than the default (1 s) and than
 * SLOW's run (about 150 ms idle, longer under load), so that the deadline, not the budget, ends it.
 * The default is checked on its own: the cloud's options resolve to 1 s when none is given. That
 * /healthz is served while a preview runs is shown by the budget test above (same pool).
 */
const DEADLINE_MS = 20;

Deno.test("cloud preview: a preview past its deadline has its worker stopped and answers 422 preview_deadline_exceeded", async () => {
  assertEquals(resolveOptions({}).previewDeadlineMs, 1_000, "the default deadline");
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    const preview = (body: unknown) =>
      call(cloud, "POST", "/api/transforms/preview", { token, body });
    // Every preview here gets 20 ms, so only SLOW ones are sent (a quick one's cold start could
    // pass 20 ms on a loaded machine); that the next preview gets a fresh worker is shown in
    // cloud/preview/pool_test.ts, where one preview can have its own deadline.
    const res = await preview(SLOW);
    assertEquals(res.status, 422, res.text);
    assertEquals(res.json.error.code, "preview_deadline_exceeded");
    assertEquals(res.json.error.deadline_ms, DEADLINE_MS);

    // The MCP tool and the web UI's live preview take the same way.
    const mcp = await connectMcp(cloud, token);
    try {
      assertMatch(
        errorText(await mcp.raw("preview-transform", SLOW)),
        new RegExp(
          `^preview_deadline_exceeded: the preview ran past its deadline of ${DEADLINE_MS} ms`,
        ),
      );
    } finally {
      await mcp.close();
    }
    const ui = await previewOf(
      cloud.server.services,
      JSON.stringify(SLOW.spec),
      JSON.stringify(SLOW.input),
    );
    assertMatch(ui.problems[0].message, new RegExp(`deadline of ${DEADLINE_MS} ms`));
  }, { previewDeadlineMs: DEADLINE_MS });
});

Deno.test("cloud preview: a split separator that could backtrack is refused as a spec error, at once", async () => {
  await withCloud(async (cloud) => {
    const { apiToken: token } = await makeUser(cloud, "ada@example.com");
    const res = await call(cloud, "POST", "/api/transforms/preview", {
      token,
      body: BACKTRACKING,
    });
    assertEquals([res.status, res.json.error.code], [422, "validation_failed"], res.text);
    assertMatch(res.text, /split separator '\(a\+\)\+\(\?=b\)': the separator needs backtracking/);
    const mcp = await connectMcp(cloud, token);
    try {
      assertMatch(errorText(await mcp.raw("preview-transform", BACKTRACKING)), /split separator/);
    } finally {
      await mcp.close();
    }
  }, { previewDeadlineMs: 60_000 }); // the refusal decides, not a deadline
});

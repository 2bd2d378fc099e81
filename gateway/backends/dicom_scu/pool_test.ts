/**
 * The association pool with associations of this test: an operation aborted through an abort
 * hook (the executor's, no AbortSignal) gives its association up and frees its place; an idle
 * association serves the next operation; an operation waiting for a place leaves on abort.
 */
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { type AbortSource, DimseError, type ScuAssociation } from "../../adapters/dimse/mod.ts";
import { AssociationPool } from "./pool.ts";

const CONTEXTS = [{ abstractSyntax: "1.2.3", transferSyntaxes: ["1.2.840.10008.1.2"] }];
const REUSE = { reuse: true, retry: true };

/** An abort hook as the executor's: one listener slot, `abort` runs it once. */
class Hook implements AbortSource {
  aborted = false;
  reason: unknown = undefined;
  listener: { handleEvent(): void } | null = null;
  addEventListener(_type: "abort", listener: { handleEvent(): void }): void {
    this.listener = listener;
  }
  removeEventListener(_type: "abort", listener: { handleEvent(): void }): void {
    if (this.listener === listener) this.listener = null;
  }
  abort(): void {
    this.aborted = true;
    this.reason = new Error("client gone");
    const listener = this.listener;
    this.listener = null;
    listener?.handleEvent();
  }
}

/** An association: an operation on it waits until `finish`, or fails when it is aborted. */
class FakeAssociation {
  usable = true;
  aborted = false;
  released = false;
  #watched: AbortSource | undefined;
  #fail: ((err: Error) => void) | undefined;
  #finish: (() => void) | undefined;
  readonly closed = new Promise<void>(() => {});

  operation(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#fail = reject;
      this.#finish = () => resolve("done");
    });
  }
  finish(): void {
    this.#finish?.();
  }
  watch(signal: AbortSource): void {
    this.#watched = signal;
    signal.addEventListener("abort", this);
  }
  unwatch(): void {
    this.#watched?.removeEventListener("abort", this);
    this.#watched = undefined;
  }
  handleEvent(): void {
    this.abort();
  }
  detach(): void {}
  abort(): void {
    if (!this.usable) return;
    this.usable = false;
    this.aborted = true;
    this.#fail?.(new DimseError("aborted", "the DIMSE operation was aborted (client gone)"));
  }
  release(): Promise<void> {
    this.usable = false;
    this.released = true;
    return Promise.resolve();
  }
}

function pool(opened: FakeAssociation[], maxOpen = 1): AssociationPool {
  return new AssociationPool({
    idleSecs: 60,
    maxOpen,
    open: () => {
      const assoc = new FakeAssociation();
      opened.push(assoc);
      return Promise.resolve(assoc as unknown as ScuAssociation);
    },
  });
}

/** Runs an operation on the pool; resolves once it is under way, with its outcome. */
async function start(p: AssociationPool, signal: AbortSource) {
  let assoc: FakeAssociation | undefined;
  const outcome = p.run(CONTEXTS, signal, (a) => {
    assoc = a as unknown as FakeAssociation;
    return assoc.operation();
  }, REUSE);
  outcome.catch(() => {});
  for (let i = 0; i < 10 && !assoc; i++) await Promise.resolve();
  assert(assoc, "the operation did not start");
  return { assoc, outcome };
}

Deno.test("pool: an operation aborted through the hook gives up its association and its place", async () => {
  const opened: FakeAssociation[] = [];
  const p = pool(opened);
  const hook = new Hook();
  const first = await start(p, hook);
  hook.abort();
  const err = await assertRejects(() => first.outcome, /aborted/);
  assert(err instanceof DimseError && err.kind === "aborted");
  assert(first.assoc.aborted, "the association under it is aborted");
  assertEquals(hook.listener, null);
  assertEquals(p.counts, { open: 0, idle: 0 });
  // Its place (max_associations = 1) is free: the next operation opens a new association.
  const second = await start(p, new Hook());
  assert(second.assoc !== first.assoc);
  second.assoc.finish();
  assertEquals(await second.outcome, "done");
  assertEquals(p.counts, { open: 1, idle: 1 });
  await p.close();
});

Deno.test("pool: an idle association serves the next operation, which unlinks from its hook", async () => {
  const opened: FakeAssociation[] = [];
  const p = pool(opened);
  for (let i = 0; i < 3; i++) {
    const hook = new Hook();
    const op = await start(p, hook);
    assert(hook.listener !== null, "the operation listens to its hook");
    op.assoc.finish();
    assertEquals(await op.outcome, "done");
    assertEquals(hook.listener, null);
    // A later abort of a finished operation's hook touches nothing.
    hook.abort();
    assert(op.assoc.usable);
  }
  assertEquals(opened.length, 1);
  assertEquals(p.counts, { open: 1, idle: 1 });
  await p.close();
  assert(opened[0].released);
});

Deno.test("pool: an operation waiting for a place leaves when its hook aborts", async () => {
  const opened: FakeAssociation[] = [];
  const p = pool(opened);
  const busy = await start(p, new Hook());
  const hook = new Hook();
  const waiting = p.run(CONTEXTS, hook, () => Promise.resolve("never"), REUSE);
  await Promise.resolve();
  hook.abort();
  const err = await assertRejects(() => waiting, /aborted/);
  assert(err instanceof DimseError && err.kind === "aborted");
  busy.assoc.finish();
  assertEquals(await busy.outcome, "done");
  assertEquals(p.counts, { open: 1, idle: 1 });
  await p.close();
});

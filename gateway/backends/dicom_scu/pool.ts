/**
 * The associations of a `dicom_scu` backend to its peer. Opening one (TCP connect, A-ASSOCIATE
 * negotiation) costs several round trips, a query or a C-STORE one, so an association that served
 * a C-ECHO, C-FIND or C-STORE is kept idle for the next operation, and released (A-RELEASE) after
 * `association_idle_secs` without use, on reload and at shutdown.
 *
 * Presentation contexts are negotiated once per association: a new one proposes the contexts of
 * its operation first, then every context earlier reusable operations of the backend needed (the
 * SOP classes and transfer syntaxes seen so far), so that one association soon serves a mixed
 * stream of queries and instances. An idle association serves an operation whose contexts it
 * proposed (the peer's answer to them is known, whatever it was). When none does, the idle ones
 * are released before a new one is opened: the new proposal covers what they did.
 *
 * At most `max_associations` are open to the peer at once, idle and busy together (C-GET and
 * C-MOVE, on associations of their own, count too); an operation past it waits for a place. An
 * association is not kept idle while another is being opened: a PACS serving one association at
 * a time (DCMTK `storescp`, `dcmqrscp --single-process`) answers the new one once it is released.
 *
 * An association the peer closes or aborts while idle is dropped when next looked at. One that
 * breaks under an operation (the peer let it go as the request left) is dropped, and an
 * idempotent operation runs once more on a new association.
 */
import {
  type AbortSource,
  DimseError,
  type ProposedContext,
  type ScuAssociation,
} from "../../adapters/dimse/mod.ts";

/** What the pool reports (metrics): associations opened, reused, retried; open and idle now. */
export interface PoolEvents {
  opened(): void;
  reused(): void;
  retried(): void;
  /** The number of open (idle or busy) and of idle associations changed by these amounts. */
  changed(open: number, idle: number): void;
}

/** Settings of a pool. */
export interface PoolOptions {
  /** Seconds an unused association stays open; 0 keeps none (one association per operation). */
  idleSecs: number;
  /** Most associations open to the peer at once; 0: no maximum. */
  maxOpen: number;
  /** Opens an association proposing `contexts`. */
  open(contexts: ProposedContext[], signal: AbortSource): Promise<ScuAssociation>;
  events?: PoolEvents;
  /**
   * Two 32-bit cells shared by the pools of this backend in every isolate of the gateway
   * (BuildContext.sharedMemory): associations being opened, and a count of openings. An idle
   * association is released when another isolate opens one to the peer.
   */
  shared?: SharedArrayBuffer;
}

/** How often a pool holding idle associations looks whether another isolate opens one (ms). */
const SHARED_LOOK_MS = 25;

/** A proposed context as a string: abstract syntax, transfer syntaxes, role. */
export function contextKey(c: ProposedContext): string {
  return `${c.abstractSyntax}|${c.transferSyntaxes.join(",")}|${c.scpRole ? "scp" : ""}`;
}

/** How an operation runs. */
export interface RunOptions {
  /**
   * May run on an idle association and leave its own for the next operation; its contexts are
   * remembered and proposed by later associations. Otherwise its association proposes its own
   * contexts only and is released afterwards.
   */
  reuse: boolean;
  /** Idempotent: sent once more on a fresh association when its association breaks under it. */
  retry: boolean;
}

/** What an operation needs: its contexts and their keys; reusable or not. */
interface NeedOf {
  contexts: ProposedContext[];
  keys: string[];
  reuse: boolean;
}

interface Entry {
  assoc: ScuAssociation;
  /** contextKey of each context it was opened with. */
  proposed: ReadonlySet<string>;
  /**
   * Its idle timer: armed once, when it first goes idle; on firing it releases the association if
   * idle long enough, or is armed again for the rest (no timer set and cleared per operation).
   */
  timer?: ReturnType<typeof setTimeout>;
  /** When it last went idle (Date.now(): no op call per operation; ms are plenty here). */
  idleSince?: number;
  /** Its closing is watched (once) to drop it when it goes while idle. */
  watched?: boolean;
}

/** A broken association (the peer closed or aborted it), as opposed to a refusal or a timeout. */
export function isBroken(err: unknown, assoc: ScuAssociation): boolean {
  return err instanceof DimseError && (err.kind === "protocol" || err.kind === "aborted") &&
    !assoc.usable;
}

/** Contexts a new association proposes at most (PS3.8 allows 128). */
const MAX_PROPOSED = 120;
/** Contexts of earlier operations remembered for later proposals. */
const MAX_REMEMBERED = 100;

/** The associations of one backend to its peer. */
export class AssociationPool {
  readonly #o: PoolOptions;
  /** Open associations (idle or busy), and places taken by ones being opened. */
  #open = 0;
  /** Idle associations, least recently used first. */
  readonly #idle: Entry[] = [];
  /** Operations waiting for a place under the maximum. */
  readonly #waiters: (() => void)[] = [];
  /** Associations being released (awaited by close). */
  readonly #releasing = new Set<Promise<void>>();
  /** Associations being opened now. */
  #opening = 0;
  /** Contexts of earlier reusable operations, most recent first, and their keys. */
  #seen: { context: ProposedContext; key: string }[] = [];
  #seenKeys = new Set<string>();
  #closed = false;
  /** Openings in every isolate (PoolOptions.shared): [being opened, opened so far]. */
  readonly #shared: Int32Array;
  /** The look at #shared while associations are idle. */
  #look: ReturnType<typeof setInterval> | undefined;
  #openings = 0;

  constructor(options: PoolOptions) {
    this.#o = options;
    this.#shared = new Int32Array(options.shared ?? new SharedArrayBuffer(8), 0, 2);
  }

  /** True when associations are kept for reuse. */
  get reusing(): boolean {
    return this.#o.idleSecs > 0 && !this.#closed;
  }

  /** Open associations (idle and busy) and idle ones (status, tests). */
  get counts(): { open: number; idle: number } {
    return { open: this.#open, idle: this.#idle.length };
  }

  /**
   * Runs `fn` on an association with `contexts`: with `reuse`, an idle one that proposed them,
   * else a new one. A successful association is kept when `reuse`, otherwise released. A broken
   * one is dropped; with `retry` the operation then runs once more on a new association.
   * `signal` (the executor's abort hook, or an AbortSignal) aborts the association under it.
   * `contexts` may be the same array from call to call: their keys are then worked out once.
   */
  async run<T>(
    contexts: ProposedContext[],
    signal: AbortSource,
    fn: (assoc: ScuAssociation) => Promise<T>,
    opts: RunOptions,
  ): Promise<T> {
    const keys = keysOf(contexts);
    if (opts.reuse) this.#remember(contexts, keys);
    const need: NeedOf = { keys, contexts, reuse: opts.reuse };
    // An idle association that serves it is taken at once (no promise to wait for).
    let entry = (opts.reuse && !this.#closed && !signal.aborted && this.#takeIdle(need)) ||
      await this.#acquire(need, signal, opts.reuse);
    for (let attempt = 0;; attempt++) {
      entry.assoc.watch(signal);
      let result: T;
      try {
        result = await fn(entry.assoc);
      } catch (err) {
        entry.assoc.unwatch();
        const broken = isBroken(err, entry.assoc);
        // Whatever failed, the association's state is unknown: it is not used again.
        entry.assoc.abort();
        this.#gone();
        if (!opts.retry || !broken || attempt > 0 || signal.aborted || this.#closed) throw err;
        this.#o.events?.retried();
        entry = await this.#acquire(need, signal, false);
        continue;
      }
      entry.assoc.unwatch();
      this.#done(entry, opts.reuse);
      return result;
    }
  }

  /** Remembers `contexts` for the proposals of new associations (most recent first). */
  #remember(contexts: ProposedContext[], keys: string[]): void {
    if (this.#seenAll(keys)) return;
    const own = new Set(keys);
    const before = this.#seen.filter((c) => !own.has(c.key));
    this.#seen = [...contexts.map((c, i) => ({ context: c, key: keys[i] })), ...before]
      .slice(0, Math.max(contexts.length, MAX_REMEMBERED));
    this.#seenKeys = new Set(this.#seen.map((c) => c.key));
  }

  #seenAll(keys: string[]): boolean {
    for (let i = 0; i < keys.length; i++) if (!this.#seenKeys.has(keys[i])) return false;
    return true;
  }

  /** An idle association that proposed every context of `need` (most recently used first). */
  #takeIdle(need: NeedOf): Entry | undefined {
    this.#dropUnusable();
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const entry = this.#idle[i];
      if (!covers(entry, need.keys)) continue;
      this.#idle.splice(i, 1);
      this.#o.events?.changed(0, -1);
      this.#o.events?.reused();
      return entry;
    }
    return undefined;
  }

  /** What a new association for `need` proposes: its contexts, then those seen (reusable). */
  #proposal(need: NeedOf): ProposedContext[] {
    if (!need.reuse) return need.contexts;
    const own = new Set(need.keys);
    const others = this.#seen.filter((c) => !own.has(c.key)).map((c) => c.context);
    return [...need.contexts, ...others].slice(0, Math.max(need.contexts.length, MAX_PROPOSED));
  }

  /** An association for `need`: idle and covering it (`reuse`), or opened within the maximum. */
  async #acquire(need: NeedOf, signal: AbortSource, reuse: boolean): Promise<Entry> {
    for (;;) {
      if (this.#closed) {
        throw new DimseError("aborted", "the backend is closing (configuration reload or stop)");
      }
      if (signal.aborted) throw abortError(signal);
      const idle = reuse ? this.#takeIdle(need) : (this.#dropUnusable(), undefined);
      if (idle) return idle;
      // No idle association serves this operation: the new one's proposal covers theirs.
      for (const entry of this.#idle.splice(0)) {
        clearTimeout(entry.timer);
        this.#o.events?.changed(0, -1);
        this.#release(entry);
      }
      const max = this.#o.maxOpen;
      if (max === 0 || this.#open < max) return await this.#openFor(need, signal);
      await this.#wait(signal);
    }
  }

  async #openFor(need: NeedOf, signal: AbortSource): Promise<Entry> {
    this.#open++;
    this.#opening++;
    this.#o.events?.changed(1, 0);
    try {
      Atomics.add(this.#shared, 0, 1);
      Atomics.add(this.#shared, 1, 1);
      this.#openings++;
      const proposal = this.#proposal(need);
      const assoc = await this.#o.open(proposal, signal);
      this.#o.events?.opened();
      return { assoc, proposed: new Set(proposal.map(contextKey)) };
    } catch (err) {
      this.#open--;
      this.#o.events?.changed(-1, 0);
      this.#wake();
      throw err;
    } finally {
      this.#opening--;
      Atomics.sub(this.#shared, 0, 1);
    }
  }

  /**
   * While associations are idle: when another isolate opens one to the peer, they are released
   * (the peer may serve one association at a time, and wait for them to end).
   */
  #watchOthers(): void {
    if (this.#look !== undefined || this.#o.shared === undefined) return;
    let seen = Atomics.load(this.#shared, 1) - this.#openings;
    this.#look = setInterval(() => {
      const others = Atomics.load(this.#shared, 1) - this.#openings;
      if (others !== seen && Atomics.load(this.#shared, 0) > this.#opening) {
        for (const entry of this.#idle.splice(0)) {
          clearTimeout(entry.timer);
          this.#o.events?.changed(0, -1);
          this.#release(entry);
        }
      }
      seen = others;
      if (this.#idle.length === 0) {
        clearInterval(this.#look);
        this.#look = undefined;
      }
    }, SHARED_LOOK_MS);
    Deno.unrefTimer(this.#look as unknown as number);
  }

  /** Waits until a place may be free (an association released or made idle), or `signal`. */
  #wait(signal: AbortSource): Promise<void> {
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = {
        handleEvent: () => {
          const at = this.#waiters.indexOf(wake);
          if (at >= 0) this.#waiters.splice(at, 1);
          reject(abortError(signal));
        },
      };
      signal.addEventListener("abort", onAbort);
      this.#waiters.push(wake);
    });
  }

  /** Lets the longest waiting operation look again. */
  #wake(): void {
    this.#waiters.shift()?.();
  }

  /**
   * After a successful operation: kept idle (reusable, not closing, no other association being
   * opened: the peer may be waiting for this one to end), else released.
   */
  #done(entry: Entry, reuse: boolean): void {
    const opening = Math.max(this.#opening, Atomics.load(this.#shared, 0));
    if (!reuse || !this.reusing || !entry.assoc.usable || opening > 0) {
      return this.#release(entry);
    }
    entry.assoc.detach();
    entry.idleSince = Date.now();
    if (entry.timer === undefined) this.#armIdle(entry, this.#o.idleSecs * 1000);
    this.#idle.push(entry);
    this.#o.events?.changed(0, 1);
    // The peer may close or abort it meanwhile (its own idle timeout): dropped at once.
    if (!entry.watched) this.#dropWhenClosed(entry);
    this.#watchOthers();
    this.#wake();
  }

  /** Releases `entry` once it has been idle for `association_idle_secs` (see Entry.timer). */
  #armIdle(entry: Entry, ms: number): void {
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      const at = this.#idle.indexOf(entry);
      // In use: armed again when it goes idle next.
      if (at < 0) return;
      const left = entry.idleSince! + this.#o.idleSecs * 1000 - Date.now();
      if (left > 1) return this.#armIdle(entry, left);
      this.#idle.splice(at, 1);
      this.#o.events?.changed(0, -1);
      this.#release(entry);
    }, ms);
    // An idle association does not keep the process alive.
    Deno.unrefTimer(entry.timer as unknown as number);
  }

  #dropWhenClosed(entry: Entry): void {
    entry.watched = true;
    entry.assoc.closed.then(() => {
      const at = this.#idle.indexOf(entry);
      if (at < 0) return;
      this.#idle.splice(at, 1);
      clearTimeout(entry.timer);
      this.#o.events?.changed(0, -1);
      this.#gone();
    });
  }

  /** A-RELEASE; its place is free once the peer answered (or the socket closed). */
  #release(entry: Entry): void {
    const done = entry.assoc.release().finally(() => {
      this.#releasing.delete(done);
      this.#gone();
    });
    this.#releasing.add(done);
  }

  #gone(): void {
    this.#open--;
    this.#o.events?.changed(-1, 0);
    this.#wake();
  }

  /** Drops idle associations the peer closed or aborted meanwhile. */
  #dropUnusable(): void {
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const entry = this.#idle[i];
      if (entry.assoc.usable) continue;
      this.#idle.splice(i, 1);
      clearTimeout(entry.timer);
      this.#o.events?.changed(0, -1);
      entry.assoc.abort(); // closes the socket
      this.#gone();
    }
  }

  /**
   * Releases every idle association (A-RELEASE) and waits for those being released; busy ones
   * are released when their operation ends, and operations waiting for a place fail.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#look);
    this.#look = undefined;
    for (const entry of this.#idle.splice(0)) {
      clearTimeout(entry.timer);
      this.#o.events?.changed(0, -1);
      this.#release(entry);
    }
    while (this.#waiters.length) this.#wake();
    while (this.#releasing.size) await Promise.all([...this.#releasing]);
  }
}

/** Whether `entry` proposed every context key of `keys`. */
function covers(entry: Entry, keys: string[]): boolean {
  for (let i = 0; i < keys.length; i++) if (!entry.proposed.has(keys[i])) return false;
  return true;
}

/** contextKey of each context, worked out once per array of contexts. */
const KEYS = new WeakMap<ProposedContext[], string[]>();

function keysOf(contexts: ProposedContext[]): string[] {
  let keys = KEYS.get(contexts);
  if (keys === undefined) KEYS.set(contexts, keys = contexts.map(contextKey));
  return keys;
}

function abortError(signal: AbortSource): DimseError {
  const reason = signal.reason as { name?: string } | undefined;
  return reason?.name === "TimeoutError"
    ? new DimseError("timeout", "the DIMSE operation timed out")
    : new DimseError("aborted", "the DIMSE operation was aborted (client gone)");
}

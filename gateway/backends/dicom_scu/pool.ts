/**
 * The associations of a `dicom_scu` backend to its peer. Opening one (TCP connect, A-ASSOCIATE
 * negotiation) costs several round trips, a query or a C-STORE one, so an association that served
 * an operation is kept idle for the next operation its accepted presentation contexts cover
 * (C-ECHO, C-FIND, C-STORE); it is released (A-RELEASE) after `association_idle_secs` without use,
 * on reload and on shutdown. At most `max_associations` are open to the peer at once, idle and
 * busy together (C-GET and C-MOVE, never reused, count too): an operation past the maximum first
 * takes the place of an idle association that does not cover it, else waits for one to be free.
 *
 * An association the peer closes or aborts while idle is dropped when next looked at. One that
 * breaks under an operation (the peer let it go as the request left) is dropped, and an
 * idempotent operation runs once more on a fresh association.
 */
import { DimseError, type ProposedContext, type ScuAssociation } from "../../adapters/dimse/mod.ts";

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
  open(contexts: ProposedContext[], signal: AbortSignal): Promise<ScuAssociation>;
  events?: PoolEvents;
}

/** What an operation needs of an association. */
export interface Need {
  /** The presentation contexts to propose when an association is opened for it. */
  contexts: ProposedContext[];
  /**
   * True when `assoc`, opened proposing the contexts of keys `proposed` (contextKey), serves the
   * operation as well as a new association would.
   */
  covers(assoc: ScuAssociation, proposed: ReadonlySet<string>): boolean;
}

/** A proposed context as a string: abstract syntax, transfer syntaxes, role. */
export function contextKey(c: ProposedContext): string {
  return `${c.abstractSyntax}|${c.transferSyntaxes.join(",")}|${c.scpRole ? "scp" : ""}`;
}

/** How an operation runs. */
export interface RunOptions {
  /** May run on an idle association and leave its own for the next operation. */
  reuse: boolean;
  /** Idempotent: sent once more on a fresh association when its association breaks under it. */
  retry: boolean;
}

interface Entry {
  assoc: ScuAssociation;
  /** contextKey of each context it was opened with. */
  proposed: ReadonlySet<string>;
  timer?: ReturnType<typeof setTimeout>;
}

/** A broken association (the peer closed or aborted it), as opposed to a refusal or a timeout. */
export function isBroken(err: unknown, assoc: ScuAssociation): boolean {
  return err instanceof DimseError && (err.kind === "protocol" || err.kind === "aborted") &&
    !assoc.usable;
}

/** True when every one of `contexts` is accepted on `assoc` in one of its transfer syntaxes. */
export function acceptsAll(assoc: ScuAssociation, contexts: ProposedContext[]): boolean {
  return contexts.every((c) => {
    const pc = assoc.accepted(c.abstractSyntax);
    return pc !== undefined && c.transferSyntaxes.includes(pc.getAcceptedTransferSyntaxUid()!);
  });
}

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
  #closed = false;

  constructor(options: PoolOptions) {
    this.#o = options;
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
   * Runs `fn` on an association serving `need`: an idle one when `reuse` and one covers it, else
   * a new one. A successful association is kept when `reuse`, otherwise released. A broken one is
   * dropped; with `retry` the operation then runs once more on a new association.
   */
  async run<T>(
    need: Need,
    signal: AbortSignal,
    fn: (assoc: ScuAssociation) => Promise<T>,
    opts: RunOptions,
  ): Promise<T> {
    let entry = await this.#acquire(need, signal, opts.reuse);
    for (let attempt = 0;; attempt++) {
      const unwatch = entry.assoc.watch(signal);
      let result: T;
      try {
        result = await fn(entry.assoc);
      } catch (err) {
        unwatch();
        const broken = isBroken(err, entry.assoc);
        // Whatever failed, the association's state is unknown: it is not used again.
        entry.assoc.abort();
        this.#gone();
        if (!opts.retry || !broken || attempt > 0 || signal.aborted || this.#closed) throw err;
        this.#o.events?.retried();
        entry = await this.#acquire(need, signal, false);
        continue;
      }
      unwatch();
      this.#done(entry, opts.reuse);
      return result;
    }
  }

  /** An association for `need`: idle and covering it (`reuse`), or opened within the maximum. */
  async #acquire(need: Need, signal: AbortSignal, reuse: boolean): Promise<Entry> {
    for (;;) {
      if (this.#closed) {
        throw new DimseError("aborted", "the backend is closing (configuration reload or stop)");
      }
      if (signal.aborted) throw abortError(signal);
      this.#dropUnusable();
      if (reuse) {
        for (let i = this.#idle.length - 1; i >= 0; i--) {
          const entry = this.#idle[i];
          if (!need.covers(entry.assoc, entry.proposed)) continue;
          this.#idle.splice(i, 1);
          clearTimeout(entry.timer);
          this.#o.events?.changed(0, -1);
          this.#o.events?.reused();
          return entry;
        }
      }
      const max = this.#o.maxOpen;
      if (max > 0 && this.#open >= max && this.#idle.length > 0) {
        // Full, but an idle association does not serve this operation: it makes room.
        const lru = this.#idle.shift()!;
        clearTimeout(lru.timer);
        this.#o.events?.changed(0, -1);
        this.#release(lru);
        continue;
      }
      if (max === 0 || this.#open < max) return await this.#openFor(need, signal);
      await this.#wait(signal);
    }
  }

  async #openFor(need: Need, signal: AbortSignal): Promise<Entry> {
    this.#open++;
    this.#o.events?.changed(1, 0);
    try {
      const assoc = await this.#o.open(need.contexts, signal);
      this.#o.events?.opened();
      return { assoc, proposed: new Set(need.contexts.map(contextKey)) };
    } catch (err) {
      this.#open--;
      this.#o.events?.changed(-1, 0);
      this.#wake();
      throw err;
    }
  }

  /** Waits until a place may be free (an association released or made idle), or `signal`. */
  #wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.#waiters.indexOf(wake);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(abortError(signal));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(wake);
    });
  }

  /** Lets the longest waiting operation look again. */
  #wake(): void {
    this.#waiters.shift()?.();
  }

  /** After a successful operation: kept idle (reusable, not closing), else released. */
  #done(entry: Entry, reuse: boolean): void {
    if (!reuse || !this.reusing || !entry.assoc.usable) return this.#release(entry);
    entry.assoc.detach();
    entry.timer = setTimeout(() => {
      const at = this.#idle.indexOf(entry);
      if (at < 0) return;
      this.#idle.splice(at, 1);
      this.#o.events?.changed(0, -1);
      this.#release(entry);
    }, this.#o.idleSecs * 1000);
    // An idle association does not keep the process alive.
    Deno.unrefTimer(entry.timer as unknown as number);
    this.#idle.push(entry);
    this.#o.events?.changed(0, 1);
    this.#wake();
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
    for (const entry of this.#idle.splice(0)) {
      clearTimeout(entry.timer);
      this.#o.events?.changed(0, -1);
      this.#release(entry);
    }
    while (this.#waiters.length) this.#wake();
    while (this.#releasing.size) await Promise.all([...this.#releasing]);
  }
}

function abortError(signal: AbortSignal): DimseError {
  const reason = signal.reason as { name?: string } | undefined;
  return reason?.name === "TimeoutError"
    ? new DimseError("timeout", "the DIMSE operation timed out")
    : new DimseError("aborted", "the DIMSE operation was aborted (client gone)");
}

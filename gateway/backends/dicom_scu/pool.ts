/**
 * Idle associations of a `dicom_scu` backend, kept for the next C-ECHO or C-FIND that proposes
 * the same presentation contexts: opening an association (TCP connect, A-ASSOCIATE negotiation)
 * costs several round trips, a query one. An idle association is released after
 * `association_idle_secs`; one the PACS closes or aborts meanwhile is dropped when next looked at.
 */
import type { ProposedContext, ScuAssociation } from "../../adapters/dimse/mod.ts";

/** Idle associations kept per set of presentation contexts. */
const MAX_IDLE_PER_KEY = 4;

interface Idle {
  assoc: ScuAssociation;
  timer: ReturnType<typeof setTimeout>;
}

/** Idle associations by the contexts they negotiated. */
export class AssociationPool {
  readonly #idleMs: number;
  readonly #idle = new Map<string, Idle[]>();
  #closed = false;

  /** `idleSecs` 0 keeps nothing: every operation opens and releases its own association. */
  constructor(idleSecs: number) {
    this.#idleMs = idleSecs * 1000;
  }

  get enabled(): boolean {
    return this.#idleMs > 0 && !this.#closed;
  }

  /** The key of a proposal: same contexts, same negotiation. */
  static key(contexts: ProposedContext[]): string {
    return JSON.stringify(contexts);
  }

  /** An idle association still usable for `key`, or undefined. */
  take(key: string): ScuAssociation | undefined {
    const list = this.#idle.get(key);
    while (list && list.length > 0) {
      const { assoc, timer } = list.pop()!;
      clearTimeout(timer);
      if (assoc.usable) return assoc;
      assoc.abort(); // closes the socket of one the peer let go
    }
    return undefined;
  }

  /** Keeps a usable association for `key` (else, or when full, releases it). */
  async put(key: string, assoc: ScuAssociation): Promise<void> {
    let list = this.#idle.get(key);
    if (!this.enabled || !assoc.usable || (list?.length ?? 0) >= MAX_IDLE_PER_KEY) {
      return await assoc.release();
    }
    if (!list) this.#idle.set(key, list = []);
    assoc.detach();
    const entry: Idle = {
      assoc,
      timer: setTimeout(() => {
        const at = list!.indexOf(entry);
        if (at >= 0) list!.splice(at, 1);
        void assoc.release();
      }, this.#idleMs),
    };
    // An idle association must not keep the process alive.
    Deno.unrefTimer(entry.timer as unknown as number);
    list.push(entry);
  }

  /** Number of idle associations (for tests and status). */
  get size(): number {
    let n = 0;
    for (const list of this.#idle.values()) n += list.length;
    return n;
  }

  /** Releases every idle association; later `put`s release at once. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#idle.values()].flat();
    this.#idle.clear();
    for (const { timer } of all) clearTimeout(timer);
    await Promise.all(all.map(({ assoc }) => assoc.release()));
  }
}

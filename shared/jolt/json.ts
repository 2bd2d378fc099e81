/**
 * JSON value helpers shared by the engine's operations and the fast path's tape: type tests, safe
 * key access, copies, equality. Depends on nothing else of the JOLT code.
 */

/** A JSON object as the engine sees it. */
export type JsonMap = Record<string, unknown>;

/** Marker for "no value here" (JOLT's empty Optional), distinct from a JSON null. */
export const ABSENT: unique symbol = Symbol("absent");
/** Type of {@link ABSENT}. */
export type Absent = typeof ABSENT;

/** True for a JSON object (not null, not an array). */
export function isMap(v: unknown): v is JsonMap {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Describes a JSON value's type for error messages. */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** True for a JSON object or array. */
export function isContainer(v: unknown): v is JsonMap | unknown[] {
  return v !== null && typeof v === "object";
}

const hasOwn = Object.hasOwn;
const OBJECT_PROTO = Object.prototype;

// A plain property read is much cheaper than Object.hasOwn. Inherited members of a plain object
// are functions or Object.prototype itself ("__proto__"), never JSON values, so only those need
// the slow check.

/** Own property test (never sees Object.prototype members such as "constructor"). */
export function has(map: JsonMap, key: string): boolean {
  const v = map[key];
  if (v === undefined) return false;
  if (typeof v === "function" || v === OBJECT_PROTO) return hasOwn(map, key);
  return true;
}

/** The own value at `key`, or undefined. */
export function getOwn(map: JsonMap, key: string): unknown {
  const v = map[key];
  if (v === undefined) return undefined;
  if (typeof v === "function" || v === OBJECT_PROTO) return hasOwn(map, key) ? v : undefined;
  return v;
}

/** Sets `key` as an own, enumerable property, even for "__proto__". */
export function setKey(map: JsonMap, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(map, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    map[key] = value;
  }
}

/** A shallow copy of a container. */
export function shallowCopy<T extends JsonMap | unknown[]>(c: T): T {
  if (Array.isArray(c)) return c.slice() as T;
  const out: JsonMap = {};
  for (const k in c) {
    if (hasOwn(c, k)) setKey(out, k, (c as JsonMap)[k]);
  }
  return out as T;
}

/** A deep copy of a JSON value (used for spec-supplied literals written to outputs). */
export function deepCopy(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(deepCopy);
  const out: JsonMap = {};
  for (const k in v as JsonMap) {
    if (hasOwn(v, k)) setKey(out, k, deepCopy((v as JsonMap)[k]));
  }
  return out;
}

/** Deep-freezes a JSON value in place (compiled specs keep their literals frozen). */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as JsonMap)[k]);
  }
  return v;
}

/** Structural equality of JSON values (Java's List/Map equals). */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!hasOwn(b, k) || !jsonEquals((a as JsonMap)[k], (b as JsonMap)[k])) return false;
  }
  return true;
}

/**
 * Ownership of containers during one `apply`: containers created (or copied) by the engine
 * may be changed in place; anything else (the caller's input, the context) is copied first.
 * This is how operations that JOLT runs in place stay non-mutating without deep clones.
 */
export class Ownership {
  readonly #owned = new Set<object>();

  /** Marks a freshly created container as ours and returns it. */
  own<T extends object>(c: T): T {
    this.#owned.add(c);
    return c;
  }

  /** True if `c` was created during this apply. */
  owns(c: object): boolean {
    return this.#owned.has(c);
  }

  /** `c` itself if owned, else an owned shallow copy of it. */
  writable<T extends JsonMap | unknown[]>(c: T): T {
    if (this.#owned.has(c)) return c;
    const copy = shallowCopy(c);
    this.#owned.add(copy);
    return copy;
  }

  /** Makes `parent[key]` (a container) writable, storing the copy back; `parent` must be owned. */
  writableIn<T extends JsonMap | unknown[]>(
    parent: JsonMap | unknown[],
    key: string | number,
    c: T,
  ): T {
    if (this.#owned.has(c)) return c;
    const copy = shallowCopy(c);
    this.#owned.add(copy);
    if (Array.isArray(parent)) parent[key as number] = copy;
    else setKey(parent, key as string, copy);
    return copy;
  }
}

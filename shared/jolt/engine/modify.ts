/**
 * `modify-overwrite-beta`, `modify-default-beta`, `modify-define-beta` (JOLT's Modifier): walks
 * the input like shift, but writes computed values in place. The right-hand side is a literal,
 * a lookup (`@(1,name)`, `^context.path`) or a function call (`=concat(@(1,a),'-',@(1,b))`),
 * or an array of those where the first one that yields a value wins.
 *
 * Flavours decide when a write happens: overwrite always, default when the value is missing or
 * null, define only when missing. Per key, a `+` / `~` / `_` prefix switches flavour and a `?`
 * suffix means "only if the key exists".
 */

import { MAX_ARRAY_INDEX, padTo } from "./limits.ts";
import { atPath, specFail } from "./errors.ts";
import {
  ABSENT,
  type Absent,
  describe,
  has,
  isContainer,
  isMap,
  type JsonMap,
  type Ownership,
  setKey,
} from "../json.ts";
import { parseJavaInt } from "./java.ts";
import { Evaluator, LiteralArg, type RhsState } from "./modify_rhs.ts";
import { ArrayElement, LiteralElement, type PathElement, StarElement } from "./path_elements.ts";
import { parseKey, splitOr } from "./paths.ts";
import { STAR_RANK } from "./star.ts";
import {
  type Child,
  type Children,
  type LiteralChild,
  literalChild,
  process,
  type Strategy,
} from "./strategy.ts";
import { Matched, type WalkedPath, WalkedPath as Walk } from "./walked_path.ts";

/** Write modes: overwrite (`+`), default (`~`), define (`_`). */
type Mode = "+" | "~" | "_";

const MODE_OF_OPERATION: Record<string, Mode> = {
  "modify-overwrite-beta": "+",
  "modify-default-beta": "~",
  "modify-define-beta": "_",
};

interface State extends RhsState {
  readonly own: Ownership;
}

function mapApplicable(mode: Mode, map: JsonMap, key: string): boolean {
  if (mode === "+") return true;
  if (mode === "~") return !has(map, key) || map[key] === null;
  return !has(map, key);
}

function listApplicable(mode: Mode, list: unknown[], index: number, origSize: number): boolean {
  if (index < 0 || origSize < 0) return false;
  if (mode === "+") return true;
  const v = index < list.length ? list[index] : null;
  if (mode === "~") return v === null;
  return index >= origSize && v === null;
}

interface KeyInfo {
  readonly pe: PathElement;
  readonly mode: Mode;
  readonly checkValue: boolean;
}

/** Reads the `+`/`~`/`_` prefix and the `?` suffix off a key, then parses the rest. */
function parseModKey(rawKey: string, parentMode: Mode): KeyInfo {
  if (rawKey.length === 0) specFail("empty key");
  let key = rawKey;
  let mode = parentMode;
  const first = key[0];
  const suffix = key.length > 1 ? key[key.length - 1] : null;
  if (first === "+" || first === "~" || first === "_") {
    mode = first;
    key = key.slice(1);
  }
  let checkValue = false;
  if (suffix === "?" && !key.endsWith("\\?")) {
    checkValue = true;
    key = key.slice(0, -1);
  }
  const pe = parseKey(key);
  if (!(pe instanceof LiteralElement || pe instanceof StarElement || pe instanceof ArrayElement)) {
    specFail(`modify keys can be literals, '*' patterns or [n] indexes, not "${rawKey}"`);
  }
  return { pe, mode, checkValue };
}

abstract class ModNode implements Child<State> {
  readonly pe: PathElement;
  readonly mode: Mode;
  readonly checkValue: boolean;

  constructor(info: KeyInfo) {
    this.pe = info.pe;
    this.mode = info.mode;
    this.checkValue = info.checkValue;
  }

  apply(key: string, input: unknown | Absent, wp: WalkedPath, st: State): boolean {
    const m = this.pe.match(key, wp);
    if (m === null) return false;
    if (!this.checkValue || input !== ABSENT) this.applyElement(key, input, m, wp, st);
    return true;
  }

  abstract applyElement(
    key: string,
    input: unknown | Absent,
    m: Matched,
    wp: WalkedPath,
    st: State,
  ): void;
}

class ModLeaf extends ModNode {
  readonly #evaluators: Evaluator[];

  constructor(info: KeyInfo, rhs: unknown, path: readonly string[]) {
    super(info);
    if (typeof rhs === "string") {
      this.#evaluators = [Evaluator.parse(rhs)];
    } else if (Array.isArray(rhs) && rhs.length > 0) {
      this.#evaluators = rhs.map((r, i) =>
        atPath(
          [...path, String(i)],
          () =>
            typeof r === "string"
              ? Evaluator.parse(r, true)
              : new Evaluator(null, [new LiteralArg(r)]),
        )
      );
    } else {
      this.#evaluators = [new Evaluator(null, [new LiteralArg(rhs)])];
    }
  }

  applyElement(_key: string, input: unknown | Absent, m: Matched, wp: WalkedPath, st: State) {
    const parent = wp.ref(0);
    wp.push(input === ABSENT ? null : input, m);
    let value: unknown = ABSENT;
    for (const e of this.#evaluators) {
      value = e.evaluate(input, wp, st);
      if (value !== ABSENT) break;
    }
    wp.pop();
    if (value === ABSENT) return;
    if (isMap(parent)) {
      if (mapApplicable(this.mode, parent, m.key)) setKey(parent, m.key, value);
    } else if (Array.isArray(parent) && m.origSize >= 0) {
      const index = parseJavaInt(m.key) ?? -1;
      if (index < parent.length && listApplicable(this.mode, parent, index, m.origSize)) {
        parent[index] = value;
      }
    }
  }
}

/** What a composite node expects its value to be. */
type DataType = { kind: "map" } | { kind: "list"; maxIndex: number } | { kind: "runtime" };

function rank(pe: PathElement): number {
  return pe instanceof StarElement ? STAR_RANK[pe.star.kind] : 1;
}

class ModComposite extends ModNode {
  readonly #children: Children<State>;
  readonly #strategy: Strategy;
  readonly #type: DataType;

  /** `baseMode` is the operation's flavour: a key's prefix applies to that key only. */
  constructor(info: KeyInfo, spec: JsonMap, path: readonly string[], baseMode: Mode) {
    super(info);
    const literals = new Map<string, Child<State>>();
    const literalList: LiteralChild<State>[] = [];
    const computed: ModNode[] = [];
    const seen = new Set<string>();
    let maxIndex = -1;
    let mapKey: string | null = null;
    let arrayKey: string | null = null;
    for (const rawKey of Object.keys(spec)) {
      const rhs = spec[rawKey];
      const childPath = [...path, rawKey];
      for (const alt of splitOr(rawKey)) {
        const child = atPath(childPath, () => {
          const childInfo = parseModKey(alt, baseMode);
          return isMap(rhs) && Object.keys(rhs).length > 0
            ? new ModComposite(childInfo, rhs, childPath, baseMode)
            : new ModLeaf(childInfo, rhs, childPath);
        });
        const pe = child.pe;
        if (seen.has(pe.canonical)) specFail(`duplicate key "${pe.canonical}"`, childPath);
        seen.add(pe.canonical);
        if (pe instanceof LiteralElement) {
          mapKey ??= pe.canonical;
          literals.set(pe.key, child);
          literalList.push(literalChild(pe.key, child));
        } else if (pe instanceof ArrayElement) {
          arrayKey ??= pe.canonical;
          if (pe.type !== "explicit") {
            specFail(`only explicit array indexes like [2] are supported, got "${alt}"`, childPath);
          }
          if (pe.index > MAX_ARRAY_INDEX) {
            specFail(`array index ${pe.index} is over the limit of ${MAX_ARRAY_INDEX}`, childPath);
          }
          if (!child.checkValue) maxIndex = Math.max(maxIndex, pe.index);
          const key = String(pe.index);
          literals.set(key, child);
          literalList.push(literalChild(key, child));
        } else {
          // `*` alone fits maps and lists; any other star pattern implies a map.
          if ((pe as StarElement).star.kind !== "starAll") mapKey ??= pe.canonical;
          computed.push(child);
        }
        if (mapKey !== null && arrayKey !== null) {
          specFail(`can not mix array indexes and map keys: "${mapKey}" and "${arrayKey}"`, path);
        }
      }
    }
    this.#type = arrayKey !== null
      ? { kind: "list", maxIndex }
      : mapKey !== null
      ? { kind: "map" }
      : { kind: "runtime" };
    computed.sort((a, b) => {
      const d = rank(a.pe) - rank(b.pe);
      if (d !== 0) return d;
      const ca = a.pe.canonical;
      const cb = b.pe.canonical;
      if (ca.length !== cb.length) return cb.length - ca.length;
      return ca < cb ? -1 : ca > cb ? 1 : 0;
    });
    this.#children = { literals, literalList, computed };
    this.#strategy = computed.length === 0
      ? "allLiterals"
      : literals.size === 0
      ? "computed"
      : this.mode === "_" && this.#type.kind === "list"
      ? "conflict"
      : "allLiteralsWithComputed";
  }

  #compatible(v: unknown): boolean {
    switch (this.#type.kind) {
      case "list":
        return v === null || Array.isArray(v);
      case "map":
        return v === null || isMap(v);
      default:
        return v !== null;
    }
  }

  applyElement(key: string, inputOpt: unknown | Absent, m: Matched, wp: WalkedPath, st: State) {
    let input: unknown = inputOpt === ABSENT || inputOpt === undefined ? null : inputOpt;
    if (!this.#compatible(input)) return;
    const parent = wp.ref(0);
    if (input === null) {
      input = this.#create(key, parent, wp, st);
    } else if (isContainer(input) && !st.own.owns(input) && isContainer(parent)) {
      // Modify works in place: make this level ours before anything below writes into it.
      input = st.own.writable(input);
      if (Array.isArray(parent)) parent[parseJavaInt(key) ?? -1] = input;
      else setKey(parent, key, input);
    }
    if (Array.isArray(input)) {
      const origSize = input.length;
      if (this.#type.kind === "list") {
        padTo(input, this.#type.maxIndex + 1, "modify");
      }
      m = new Matched(m.key, null, origSize);
    }
    wp.push(input, m);
    process(this.#children, this.#strategy, input, wp, st);
    wp.pop();
  }

  /** Creates the missing container for this key if the write mode allows it. */
  #create(key: string, parent: unknown, wp: WalkedPath, st: State): unknown {
    const kind = this.#type.kind;
    if (kind === "runtime") return null;
    if (isMap(parent)) {
      if (!mapApplicable(this.mode, parent, key)) return null;
      const value = st.own.own(kind === "list" ? [] : {});
      setKey(parent, key, value);
      return value;
    }
    if (Array.isArray(parent)) {
      const index = parseJavaInt(key) ?? -1;
      if (index >= parent.length) return null;
      if (!listApplicable(this.mode, parent, index, wp.last().origSize)) return null;
      const value = st.own.own(kind === "list" ? [] : {});
      parent[index] = value;
      return value;
    }
    return null;
  }
}

/** A compiled modify spec (one of the three flavours). */
export class ModifyOp {
  readonly #root: ModComposite;

  constructor(spec: unknown, operation: string) {
    if (!isMap(spec)) specFail(`${operation} expects a spec object, got ${describe(spec)}`, []);
    const mode = MODE_OF_OPERATION[operation];
    this.#root = new ModComposite(
      { pe: new LiteralElement("root"), mode, checkValue: false },
      spec,
      [],
      mode,
    );
  }

  /** Applies the modifications; containers are copied before they are changed. */
  apply(input: unknown, own: Ownership, context: unknown): unknown {
    const root = isContainer(input) ? own.writable(input) : input;
    const wp = new Walk();
    wp.push(root, new Matched("root"));
    const st: State = { own, context: { root: context ?? null } };
    this.#root.apply("root", root, wp, st);
    return root;
  }
}

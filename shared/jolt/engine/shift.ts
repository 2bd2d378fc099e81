/**
 * `shift` (JOLT's Shiftr): walks the input and the spec in parallel and copies each matched
 * input value to the output path(s) on the spec's right-hand side.
 */

import { atPath, specFail } from "./errors.ts";
import {
  ABSENT,
  type Absent,
  describe,
  has,
  isMap,
  type JsonMap,
  type Ownership,
} from "../json.ts";
import {
  AmpElement,
  ArrayElement,
  AtElement,
  DollarElement,
  HashElement,
  LiteralElement,
  type PathElement,
  StarElement,
  TransposeElement,
} from "./path_elements.ts";
import { parseKey, splitOr } from "./paths.ts";
import { STAR_RANK } from "./star.ts";
import { chargeSteps } from "./limits.ts";
import {
  type Child,
  type Children,
  type LiteralChild,
  literalChild,
  process,
  type Strategy,
} from "./strategy.ts";
import { ShiftOutput, ShiftWriter, startShiftRun } from "./shift_write.ts";
import { type Levels, Matched, WalkedPath } from "./walked_path.ts";
import { type CompositeParts, type LeafParts, type ShiftNode, Source } from "./shift_parts.ts";

type ShiftState = ShiftOutput;

/** A compiled shift spec. */
export class ShiftOp {
  readonly #root: ShiftComposite;
  readonly #wp = new WalkedPath(); // reused: apply is synchronous and never re-entered

  constructor(spec: unknown) {
    if (!isMap(spec)) specFail(`shift expects a spec object, got ${describe(spec)}`, []);
    this.#root = new ShiftComposite("root", spec, [], [1]);
  }

  /** The compiled spec's root node, for compilers of faster paths (fast/). */
  get root(): ShiftNode {
    return this.#root;
  }

  /**
   * Runs the shift; the result is a new document (null when nothing was written). Pass `own`
   * when a later operation will edit the result in place, so that it knows what it may edit.
   */
  apply(input: unknown, own: Ownership | null): unknown {
    startShiftRun();
    const out = new ShiftOutput(own);
    const wp = this.#wp;
    wp.reset();
    const value = input === undefined ? null : input;
    wp.push(value, new Matched("root"));
    this.#root.apply("root", value, wp, out);
    return has(out.holder, "root") ? out.holder.root : null;
  }
}

function checkLhs(pe: PathElement, key: string): void {
  if (pe instanceof ArrayElement) {
    specFail(
      `array keys like "${key}" are not valid on the shift LHS; match indexes with "0", "1"…`,
    );
  }
}

/** A spec key whose value is an object: matches, then hands the value to its children. */
export class ShiftComposite implements Child<ShiftState> {
  readonly #pe: PathElement;
  readonly #special: Child<ShiftState>[] = [];
  readonly #children: Children<ShiftState>;
  readonly #strategy: Strategy;

  constructor(
    key: string,
    spec: JsonMap,
    path: readonly string[],
    parentLevels: Levels,
  ) {
    const pe = parseKey(key);
    checkLhs(pe, key);
    if (pe instanceof AtElement) specFail("'@' shift key can not have children");
    if (pe instanceof DollarElement) specFail("'$' shift key can not have children");
    pe.validate(parentLevels);
    this.#pe = pe;
    const levels = [...parentLevels, pe.groupCount(parentLevels[parentLevels.length - 1])];

    const literals = new Map<string, Child<ShiftState>>();
    const literalList: LiteralChild<ShiftState>[] = [];
    const computed: { pe: PathElement; node: Child<ShiftState> }[] = [];
    const seen = new Set<string>();
    for (const rawKey of Object.keys(spec)) {
      const rhs = spec[rawKey];
      const childPath = [...path, rawKey];
      for (const alt of splitOr(rawKey)) {
        const node = atPath(
          childPath,
          () =>
            isMap(rhs)
              ? new ShiftComposite(alt, rhs, childPath, levels)
              : new ShiftLeaf(alt, rhs, childPath, levels),
        );
        const childPe = node.pathElement;
        if (seen.has(childPe.canonical)) {
          specFail(
            `duplicate key "${childPe.canonical}" (after expanding '|' and sugar)`,
            childPath,
          );
        }
        seen.add(childPe.canonical);
        if (childPe instanceof LiteralElement) {
          literals.set(childPe.key, node);
          literalList.push(literalChild(childPe.key, node));
        } else if (
          childPe instanceof AtElement || childPe instanceof HashElement ||
          childPe instanceof DollarElement || childPe instanceof TransposeElement
        ) {
          this.#special.push(node);
        } else {
          computed.push({ pe: childPe, node });
        }
      }
    }
    if (seen.size === 0) specFail("a shift key with an empty {} as value is not valid");
    computed.sort((a, b) => compareComputed(a.pe, b.pe));
    this.#children = { literals, literalList, computed: computed.map((c) => c.node) };
    this.#strategy = chooseStrategy(literalList.map((l) => l.key), computed.map((c) => c.pe));
  }

  get pathElement(): PathElement {
    return this.#pe;
  }

  /** What the shift compiler needs to know of this node. */
  get parts(): CompositeParts {
    return {
      pe: this.#pe,
      special: this.#special as unknown as ShiftNode[],
      children: this.#children as unknown as Children<unknown>,
      strategy: this.#strategy,
    };
  }

  apply(key: string, input: unknown | Absent, wp: WalkedPath, st: ShiftState): boolean {
    const pe = this.#pe;
    const m = pe.match(key, wp);
    if (m === null) return false;
    if (pe instanceof TransposeElement) {
      // Swap the input for the data the transpose points at.
      const found = pe.lookup(wp);
      if (found === ABSENT) return false;
      input = found;
    }
    wp.push(input === ABSENT ? null : input, m);
    for (const s of this.#special) s.apply(key, input, wp, st);
    process(this.#children, this.#strategy, input, wp, st);
    wp.pop();
    wp.last().hashCount++;
    return true;
  }
}

/** A spec key whose value is an output path (or several, or null). */
export class ShiftLeaf implements Child<ShiftState> {
  readonly #pe: PathElement;
  readonly #source: Source;
  readonly #writers: ShiftWriter[];

  constructor(
    key: string,
    rhs: unknown,
    path: readonly string[],
    parentLevels: Levels,
  ) {
    const pe = parseKey(key);
    checkLhs(pe, key);
    pe.validate(parentLevels);
    this.#pe = pe;
    this.#source = pe instanceof DollarElement || pe instanceof HashElement
      ? Source.Key
      : pe instanceof AtElement
      ? Source.Parent
      : pe instanceof TransposeElement
      ? Source.Transpose
      : Source.Input;
    const levels = [...parentLevels, pe.groupCount(parentLevels[parentLevels.length - 1])];
    if (typeof rhs === "string") {
      this.#writers = [new ShiftWriter(rhs, levels)];
    } else if (Array.isArray(rhs)) {
      this.#writers = rhs.map((p, i) =>
        atPath([...path, String(i)], () => {
          if (typeof p !== "string") {
            specFail(`output paths must be strings, got ${describe(p)}`);
          }
          return new ShiftWriter(p, levels);
        })
      );
    } else if (rhs === null) {
      this.#writers = []; // match, but write nowhere
    } else {
      specFail(`invalid shift RHS: should be an object, a string, or an array of strings`);
    }
  }

  get pathElement(): PathElement {
    return this.#pe;
  }

  /** What the shift compiler needs to know of this node. */
  get parts(): LeafParts {
    return { pe: this.#pe, source: this.#source, writers: this.#writers };
  }

  apply(key: string, inputOpt: unknown | Absent, wp: WalkedPath, st: ShiftState): boolean {
    const input = inputOpt === ABSENT ? null : inputOpt;
    const m = this.#pe.match(key, wp);
    if (m === null) return false;
    let data: unknown;
    switch (this.#source) {
      case Source.Key:
        data = m.key;
        break;
      case Source.Parent:
        data = input;
        break;
      case Source.Transpose: {
        const found = (this.#pe as TransposeElement).lookup(wp);
        if (found === ABSENT) return false;
        data = found;
        break;
      }
      default:
        data = input;
    }
    return this.#write(input, m, data, wp, st);
  }

  /** Writes `data` at every output path, at the level this match adds. */
  #write(input: unknown, m: Matched, data: unknown, wp: WalkedPath, st: ShiftState): boolean {
    wp.push(input, m);
    for (const w of this.#writers) w.write(st, data, wp);
    wp.pop();
    // Only "real" (input-consuming) children count as a match of this key.
    if (this.#source !== Source.Input) return false;
    wp.last().hashCount++;
    return true;
  }
}

/** JOLT's order among computed keys: `&` keys, then `*` patterns with more stars first. */
function rank(pe: PathElement): number {
  if (pe instanceof AmpElement) return 1;
  if (pe instanceof StarElement) return STAR_RANK[pe.star.kind];
  return 9;
}

/** Sorts computed keys by kind, then longest canonical form first, then alphabetically. */
export function compareComputed(a: PathElement, b: PathElement): number {
  const d = rank(a) - rank(b);
  if (d !== 0) return d;
  const ca = a.canonical;
  const cb = b.canonical;
  if (ca.length !== cb.length) return cb.length - ca.length;
  return ca < cb ? -1 : ca > cb ? 1 : 0;
}

function chooseStrategy(literalKeys: string[], computed: PathElement[]): Strategy {
  if (computed.length === 0) return "availableLiterals";
  if (literalKeys.length === 0) return "computed";
  for (const c of computed) {
    if (!(c instanceof StarElement)) return "conflict";
    // Every pattern against every literal sibling: charged to the compile's step budget.
    chargeSteps(literalKeys.length);
    for (const lit of literalKeys) if (c.star.stringMatch(lit)) return "conflict";
  }
  return "availableLiteralsWithComputed";
}

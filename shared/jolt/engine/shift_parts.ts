/** The shape of compiled shift nodes, shared by the walker (shift.ts) and the compiler. */

import type { PathElement } from "./path_elements.ts";
import type { ShiftWriter } from "./shift_write.ts";
import type { Children, Strategy } from "./strategy.ts";

/** Where a leaf's data comes from: the input value, the matched key, the parent, a lookup. */
export const Source = { Input: 0, Key: 1, Parent: 2, Transpose: 3 } as const;
/** A leaf's data source. */
export type Source = (typeof Source)[keyof typeof Source];

/** The insides of a composite node (a spec key whose value is an object). */
export interface CompositeParts {
  pe: PathElement;
  /** `@`, `$`, `#` and `@(…)` children, applied before the others. */
  special: ShiftNode[];
  children: Children<unknown>;
  strategy: Strategy;
}

/** The insides of a leaf node (a spec key whose value is output paths). */
export interface LeafParts {
  pe: PathElement;
  source: Source;
  writers: readonly ShiftWriter[];
}

/** A compiled spec node. */
export interface ShiftNode {
  readonly parts: CompositeParts | LeafParts;
}

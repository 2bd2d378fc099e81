/**
 * Cross-key rules several component types share.
 */
import type { RuleProblem } from "../component_type.ts";

/** Reports `key` when set and `condition` is false. */
export function onlyWhen(
  options: Record<string, unknown>,
  keys: string[],
  condition: boolean,
  why: string,
): RuleProblem[] {
  if (condition) return [];
  return keys.filter((k) => options[k] !== undefined).map((key) => ({ key, message: why }));
}

/** Both keys set or neither. */
export function bothOrNeither(
  options: Record<string, unknown>,
  a: string,
  b: string,
): RuleProblem[] {
  const hasA = options[a] !== undefined;
  const hasB = options[b] !== undefined;
  if (hasA === hasB) return [];
  const missing = hasA ? b : a;
  return [{ key: missing, message: `missing \`${missing}\`: set both ${a} and ${b}, or neither` }];
}

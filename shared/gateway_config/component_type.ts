/**
 * What a component type is: an endpoint service, a backend service or a middleware type, with the
 * schema of its `options` table. The registry (registry.ts) holds one per type; validation, the
 * TOML writer, the secret and path walk, the generated reference, the cloud's forms and its MCP
 * tool schemas all read it from there.
 */
import type { TableSpec } from "./fields.ts";

/** The three kinds of component a configuration names by type. */
export type ComponentKind = "endpoint" | "backend" | "middleware";

/** The kinds, in the order the reference lists them. */
export const COMPONENT_KINDS: readonly ComponentKind[] = ["endpoint", "backend", "middleware"];

/** A problem found by a cross-key rule, at `key` of the options table (or the table itself). */
export interface RuleProblem {
  /** The options key the problem is about; absent for the table itself. */
  key?: string;
  /** What is wrong. */
  message: string;
}

/** The options table of one service or middleware type. */
export interface OptionSchema<Owner = unknown> {
  /** One sentence for the reference. */
  doc: string;
  /** Allowed keys; when absent, any options table is accepted unchecked. */
  fields?: TableSpec;
  /** Rules across keys; they run only when every key passed its own check. */
  rules?: (options: Record<string, unknown>, owner: Owner) => RuleProblem[];
}

/** What backend option rules may read of their backend. */
export interface BackendOwner {
  /** The names of the backend's `[targets.*]`. */
  targets: string[];
}

/** One component type: its kind, the name configs give it, and its option schema. */
export interface ComponentType<Owner = unknown> extends OptionSchema<Owner> {
  /** Endpoint service, backend service or middleware type. */
  kind: ComponentKind;
  /** The name a config writes (`service = "<name>"`, `type = "<name>"`). */
  name: string;
}

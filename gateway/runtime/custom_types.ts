/**
 * Middleware types and backend services added by a program that embeds the gateway: the options
 * schema goes to the config validator (shared/gateway_config), the factory to the runtime build.
 * A registered type is then configured, validated, reloaded, written back and scanned for secrets
 * like a built-in one.
 */
import {
  type BackendOwner,
  declaredOptions,
  type OptionDeclaration,
  registerCustomConfigType,
  type RuleProblem,
  unregisterCustomConfigType,
} from "../../shared/gateway_config/mod.ts";
import type { BackendFactory, MiddlewareFactory } from "../pipeline/mod.ts";

/** What a custom type declares besides its factory. */
export interface TypeDefinition<Owner> {
  /** One sentence saying what the type does (shown in error messages and listings). */
  doc: string;
  /**
   * The keys its `options` table accepts; a key not listed is refused with a suggestion, defaults
   * are applied before the factory runs. Absent: any options table is passed on unchecked.
   */
  options?: Record<string, OptionDeclaration>;
  /** Rules across keys, run when every key passed its own check. */
  rules?: (options: Record<string, unknown>, owner: Owner) => RuleProblem[];
}

/** A middleware type: `[middleware.<name>] type = "<registered name>"`. */
export interface MiddlewareTypeDefinition extends TypeDefinition<unknown> {
  /** Builds the middleware of one `[middleware.<name>]` table; throws with a clear message. */
  create: MiddlewareFactory;
}

/** A backend service: `[backends.<name>] service = "<registered name>"`. */
export interface BackendTypeDefinition extends TypeDefinition<BackendOwner> {
  /** Builds the backend of one `[backends.<name>]` table; throws with a clear message. */
  create: BackendFactory;
}

const middlewareFactories = new Map<string, MiddlewareFactory>();
const backendFactories = new Map<string, BackendFactory>();

/** Adds a middleware type; throws when the name is malformed, built in, or already registered. */
export function registerMiddlewareType(name: string, definition: MiddlewareTypeDefinition): void {
  registerCustomConfigType("middleware", name, schemaOf(definition));
  middlewareFactories.set(name, definition.create);
}

/** Adds a backend service; throws when the name is malformed, built in, or already registered. */
export function registerBackendType(name: string, definition: BackendTypeDefinition): void {
  registerCustomConfigType("backend", name, schemaOf(definition));
  backendFactories.set(name, definition.create);
}

/** Removes a registered middleware type; configs that name it fail to load from then on. */
export function unregisterMiddlewareType(name: string): boolean {
  middlewareFactories.delete(name);
  return unregisterCustomConfigType("middleware", name);
}

/** Removes a registered backend service; configs that name it fail to load from then on. */
export function unregisterBackendType(name: string): boolean {
  backendFactories.delete(name);
  return unregisterCustomConfigType("backend", name);
}

/** The factory of a registered middleware type. */
export function customMiddlewareFactory(type: string): MiddlewareFactory | undefined {
  return middlewareFactories.get(type);
}

/** The factory of a registered backend service. */
export function customBackendFactory(service: string): BackendFactory | undefined {
  return backendFactories.get(service);
}

function schemaOf<Owner>(definition: TypeDefinition<Owner> & { create: unknown }) {
  if (typeof definition?.create !== "function") {
    throw new TypeError("a type definition needs a `create` function");
  }
  return {
    doc: String(definition.doc ?? ""),
    fields: definition.options === undefined ? undefined : declaredOptions(definition.options),
    rules: definition.rules as
      | ((options: Record<string, unknown>, owner: BackendOwner) => RuleProblem[])
      | undefined,
  };
}

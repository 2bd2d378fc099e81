/**
 * The component registry: every endpoint service, backend service and middleware type a config
 * may name, with its option schema. The built-in types (components/mod.ts) and the types a program
 * embedding the gateway adds (custom_types.ts, through the top-level `mod.ts`) enter through the
 * same `registerComponentType`; validation, the TOML writer, the secret and path walk, the
 * generated reference, the cloud's forms and its MCP tool schemas read them back from here.
 *
 * The registry is per process: a type registered before a gateway starts (or before a reload)
 * is known to every config that process loads.
 */
import {
  type BackendOwner,
  type ComponentKind,
  type ComponentType,
  type OptionSchema,
} from "./component_type.ts";
import { BUILT_IN_TYPES } from "./components/mod.ts";
import type { BackendService, EndpointService } from "./types.ts";

const registered: Record<ComponentKind, Map<string, ComponentType<BackendOwner>>> = {
  endpoint: new Map(),
  backend: new Map(),
  middleware: new Map(),
};
const builtIn = new Set<ComponentType<BackendOwner>>();

/** Names a type may have: what a TOML bare key and a metric label can carry without quoting. */
const TYPE_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Adds a component type to what configs may name. Throws when the name is malformed, is a
 * built-in type, or was registered before (a second module must not silently replace the first
 * one's schema).
 */
export function registerComponentType(type: ComponentType<BackendOwner>): void {
  const { kind, name } = type;
  if (!Object.hasOwn(registered, kind)) {
    throw new Error(`unknown component kind ${JSON.stringify(kind)}`);
  }
  if (!TYPE_NAME.test(name)) {
    throw new Error(
      `${kind} type name ${JSON.stringify(name)} must be 1-64 lowercase letters, digits or _, ` +
        "starting with a letter",
    );
  }
  const existing = registered[kind].get(name);
  if (existing && builtIn.has(existing)) {
    throw new Error(`${kind} type \`${name}\` is built in and cannot be replaced`);
  }
  if (existing) throw new Error(`${kind} type \`${name}\` is already registered`);
  registered[kind].set(name, type);
}

/** Removes a registered type (tests, or a program that unloads an extension); never a built-in. */
export function unregisterComponentType(kind: ComponentKind, name: string): boolean {
  const existing = registered[kind]?.get(name);
  if (!existing || builtIn.has(existing)) return false;
  return registered[kind].delete(name);
}

/** The type `name` of `kind`, built-in or registered; undefined when unknown. */
export function componentType(
  kind: ComponentKind,
  name: unknown,
): ComponentType<BackendOwner> | undefined {
  return typeof name === "string" ? registered[kind].get(name) : undefined;
}

/** The option schema of type `name` of `kind`; undefined when the type is unknown. */
export function optionSchemaOf(
  kind: ComponentKind,
  name: unknown,
): OptionSchema<BackendOwner> | undefined {
  return componentType(kind, name);
}

/** Every type of `kind`: the built-in ones in their order, then the registered ones. */
export function componentTypes(kind: ComponentKind): ComponentType<BackendOwner>[] {
  return [...registered[kind].values()];
}

/** The names of every type of `kind`, built-in first. */
export function componentNames(kind: ComponentKind): string[] {
  return [...registered[kind].keys()];
}

/** True for a type that ships with the gateway (not one a program registered). */
export function isBuiltInType(kind: ComponentKind, name: string): boolean {
  const type = registered[kind].get(name);
  return type !== undefined && builtIn.has(type);
}

/** The option schemas of the built-in types of `kind`, by name. */
function builtInSchemas(kind: ComponentKind): Record<string, OptionSchema<BackendOwner>> {
  return Object.fromEntries(BUILT_IN_TYPES.filter((t) => t.kind === kind).map((t) => [t.name, t]));
}

/** `[endpoints.<name>.options]` of the built-in endpoint services, by service. */
export const ENDPOINT_OPTION_SCHEMAS = builtInSchemas("endpoint") as Record<
  EndpointService,
  OptionSchema
>;

/** `[backends.<name>.options]` of the built-in backend services, by service. */
export const BACKEND_OPTION_SCHEMAS = builtInSchemas("backend") as Record<
  BackendService,
  OptionSchema<BackendOwner>
>;

/** `[middleware.<name>.options]` of the built-in middleware types, by type. */
export const MIDDLEWARE_OPTION_SCHEMAS = builtInSchemas("middleware") as Record<
  string,
  OptionSchema
>;

for (const type of BUILT_IN_TYPES) {
  registerComponentType(type);
  builtIn.add(type);
}

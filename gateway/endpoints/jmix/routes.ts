/** The fixed routes of the `jmix` endpoint, relative to `path_prefix`. */

/** A matched JMIX route. */
export type JmixRoute =
  | { name: "package"; id: string }
  | { name: "manifest"; id: string }
  | { name: "collection" };

/** Methods each route accepts. */
export const ROUTE_METHODS: Record<JmixRoute["name"], string[]> = {
  package: ["GET", "HEAD"],
  manifest: ["GET", "HEAD"],
  collection: ["GET", "HEAD", "POST"],
};

const ID = "([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})";
const PACKAGE = new RegExp(`^/api/jmix/${ID}$`);
const MANIFEST = new RegExp(`^/api/jmix/${ID}/manifest$`);

/** The route of a relative path, or undefined (404). */
export function matchRoute(path: string): JmixRoute | undefined {
  if (path === "/api/jmix" || path === "/api/jmix/") return { name: "collection" };
  let m = PACKAGE.exec(path);
  if (m) return { name: "package", id: m[1].toLowerCase() };
  m = MANIFEST.exec(path);
  if (m) return { name: "manifest", id: m[1].toLowerCase() };
  return undefined;
}

/** True for a DICOM UID (digits and dots, at most 64 characters). */
export function isUid(value: string): boolean {
  return value.length <= 64 && /^[0-9]+(\.[0-9]+)*$/.test(value);
}

/**
 * The routes of the `dicomweb` endpoint (PS3.18: QIDO-RS, WADO-RS, STOW-RS), apart from the
 * endpoint (dicomweb.ts) so that what lists them does not load the DICOM libraries the endpoint
 * loads when a configuration has one.
 */
import type { DICOMWEB_SERVICES } from "../../shared/gateway_config/mod.ts";

const UID = "[0-9.]+";

/** A DICOMweb service of PS3.18 (QIDO-RS search, WADO-RS retrieve, STOW-RS store). */
export type DicomwebRouteService = typeof DICOMWEB_SERVICES[number];

/** One resource the endpoint routes: its PS3.18 service and the methods it accepts. */
export interface DicomwebRoute {
  name: string;
  service: DicomwebRouteService;
  pattern: RegExp;
  methods: string[];
}

const GET = "GET HEAD";

/**
 * The routes of SPEC "dicomweb endpoint" and PS3.18 (every QIDO-RS level, WADO-RS, STOW-RS),
 * relative to `path_prefix`. docs/dicom.md lists the same table (tests/dicom_web_routes_test.ts).
 */
export const DICOMWEB_ROUTES: DicomwebRoute[] = ([
  ["search studies", "qido", "/studies", GET],
  ["search series", "qido", "/series", GET],
  ["search series of a study", "qido", `/studies/${UID}/series`, GET],
  ["search instances", "qido", "/instances", GET],
  ["search instances of a study", "qido", `/studies/${UID}/instances`, GET],
  ["search instances of a series", "qido", `/studies/${UID}/series/${UID}/instances`, GET],
  ["store", "stow", "/studies", "POST"],
  ["store in a study", "stow", `/studies/${UID}`, "POST"],
  ["study metadata", "wado", `/studies/${UID}/metadata`, GET],
  ["series metadata", "wado", `/studies/${UID}/series/${UID}/metadata`, GET],
  ["instance metadata", "wado", `/studies/${UID}/series/${UID}/instances/${UID}/metadata`, GET],
  ["study", "wado", `/studies/${UID}`, GET],
  ["series", "wado", `/studies/${UID}/series/${UID}`, GET],
  ["instance", "wado", `/studies/${UID}/series/${UID}/instances/${UID}`, GET],
  ["frames", "wado", `/studies/${UID}/series/${UID}/instances/${UID}/frames/[^/]+`, GET],
  ["bulk data", "wado", "/bulkdata/.+", GET],
  ...["rendered", "thumbnail"].flatMap((kind) => [
    [`study ${kind}`, "wado", `/studies/${UID}/${kind}`, GET],
    [`series ${kind}`, "wado", `/studies/${UID}/series/${UID}/${kind}`, GET],
    [`instance ${kind}`, "wado", `/studies/${UID}/series/${UID}/instances/${UID}/${kind}`, GET],
    [
      `frames ${kind}`,
      "wado",
      `/studies/${UID}/series/${UID}/instances/${UID}/frames/[^/]+/${kind}`,
      GET,
    ],
  ]),
] as [string, DicomwebRouteService, string, string][]).map(([name, service, re, methods]) => ({
  name,
  service,
  pattern: new RegExp(`^${re}$`),
  methods: methods.split(" "),
}));

/** The route serving `method` at `path`, or the methods the path accepts (none: no route). */
export function findDicomwebRoute(
  method: string,
  path: string,
): { route?: DicomwebRoute; allowed: string[] } {
  const matching = DICOMWEB_ROUTES.filter((r) => r.pattern.test(path));
  const route = matching.find((r) => r.methods.includes(method));
  return { route, allowed: [...new Set(matching.flatMap((r) => r.methods))] };
}

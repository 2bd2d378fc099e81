/** Gateway TOML of a pipeline from an HTTP-family endpoint to a `dicom_scu` backend (tests). */

/** What {@link dicomScuPipelineToml} writes. */
export interface DicomScuPipeline {
  /** Name of the endpoint, backend and pipeline. */
  name: string;
  /** The PACS the backend calls. */
  peer: { aet: string; port: number };
  /** Endpoint service (default `dicomweb`). */
  service?: string;
  /** `path_prefix` (default `/<name>`). */
  prefix?: string;
  /** Extra lines of `[backends.<name>.options]`. */
  options?: string;
}

/** `[endpoints.x]`, `[backends.x]` (dicom_scu, 20 s timeout, local AET GATEWAY_SCU), `[pipelines.x]`. */
export function dicomScuPipelineToml(p: DicomScuPipeline): string {
  return `
[endpoints.${p.name}]
service = "${p.service ?? "dicomweb"}"
[endpoints.${p.name}.options]
path_prefix = "${p.prefix ?? `/${p.name}`}"
[backends.${p.name}]
service = "dicom_scu"
timeout_secs = 20
[backends.${p.name}.options]
aet = "${p.peer.aet}"
host = "127.0.0.1"
port = ${p.peer.port}
local_aet = "GATEWAY_SCU"
${p.options ?? ""}
[pipelines.${p.name}]
endpoints = ["${p.name}"]
backends = ["${p.name}"]
`;
}

/** `[endpoints.x]` (dicomweb at `/<name>`), `[backends.x]` (dicomweb at `baseUrl`), `[pipelines.x]`. */
export function dicomwebPipelineToml(name: string, baseUrl: string): string {
  return `
[endpoints.${name}]
service = "dicomweb"
[endpoints.${name}.options]
path_prefix = "/${name}"
[backends.${name}]
service = "dicomweb"
[backends.${name}.options]
base_url = "${baseUrl}"
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["${name}"]
`;
}

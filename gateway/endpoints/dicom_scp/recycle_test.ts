/** Which pipelines let the listener reuse a received instance's memory. */
import { assertEquals } from "../../../tests/assert.ts";
import type { Logger } from "../../../shared/log.ts";
import type { BackendConfig } from "../../../shared/gateway_config/types.ts";
import { MetadataTransformMiddleware, type SpecFile } from "../../middleware/mod.ts";
import type { BuiltPipeline } from "../../pipeline/mod.ts";
import type { Backend, Middleware } from "../../pipeline/types.ts";
import { releasesBodies } from "./recycle.ts";

function backend(service: string, required = false): Backend {
  return {
    name: service,
    config: { name: service, service, required } as unknown as BackendConfig,
  } as unknown as Backend;
}

function pipeline(backends: Backend[], middleware: Middleware[] = []): BuiltPipeline {
  return { name: "p", config: {} as BuiltPipeline["config"], backends, middleware };
}

const metadata = new MetadataTransformMiddleware(
  "route",
  {} as unknown as SpecFile,
  true,
  {} as unknown as Logger,
);
const custom: Middleware = { name: "custom", acts: { request: true, response: false } };

Deno.test("releasesBodies: echo and dicom_scu, no untracked tee, known middleware", () => {
  assertEquals(releasesBodies(pipeline([backend("echo")])), true);
  assertEquals(releasesBodies(pipeline([backend("dicom_scu")], [metadata])), true);
  assertEquals(
    releasesBodies(pipeline([backend("dicom_scu", true), backend("echo", true)])),
    true,
  );
  // A tee the executor does not wait for may still read the body.
  assertEquals(releasesBodies(pipeline([backend("dicom_scu"), backend("echo")])), false);
  // Backends that may keep the body (in-flight uploads, stored objects).
  for (const service of ["http", "fhir", "dicomweb", "http3", "storage"]) {
    assertEquals(releasesBodies(pipeline([backend(service)])), false, service);
  }
  assertEquals(releasesBodies(pipeline([backend("echo")], [custom])), false);
});

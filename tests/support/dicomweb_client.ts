/**
 * The npm `dicomweb-client` (what OHIF and other viewers use) as a test peer. It sends its
 * requests with XMLHttpRequest, which Deno does not have, so it is loaded with the `xhr2`
 * polyfill (both installed by npm under tests/peers, pinned by its package-lock.json).
 * @module
 */
import { createRequire } from "node:module";
import { isCi } from "./peers.ts";
import { REPO_ROOT } from "./paths.ts";

const PEERS = `${REPO_ROOT}/tests/peers/package.json`;

/** The UIDs of a study, series or instance. */
export interface DicomwebUids {
  studyInstanceUID?: string;
  seriesInstanceUID?: string;
  sopInstanceUID?: string;
  queryParams?: Record<string, string | number>;
}

/** The parts of `DICOMwebClient` the tests call. */
export interface DicomwebClient {
  searchForStudies(options?: DicomwebUids): Promise<Record<string, { Value?: unknown[] }>[]>;
  searchForSeries(options?: DicomwebUids): Promise<Record<string, { Value?: unknown[] }>[]>;
  searchForInstances(options?: DicomwebUids): Promise<Record<string, { Value?: unknown[] }>[]>;
  retrieveInstanceMetadata(
    options: DicomwebUids,
  ): Promise<Record<string, { Value?: unknown[] }>[]>;
  retrieveInstance(options: DicomwebUids): Promise<ArrayBuffer>;
}

/**
 * A `DICOMwebClient` for `url` (the QIDO, WADO and STOW prefix), or null when the package is not
 * installed outside CI (under CI=true a missing package fails the test).
 */
export function dicomwebClient(url: string): DicomwebClient | null {
  const require = createRequire(PEERS);
  let lib: { api: { DICOMwebClient: new (o: { url: string }) => DicomwebClient } };
  try {
    const g = globalThis as Record<string, unknown>;
    g.XMLHttpRequest ??= require("xhr2");
    lib = require("dicomweb-client");
  } catch (error) {
    const message = `dicomweb-client is not installed (${
      (error as Error).message.split("\n")[0]
    }): run \`npm ci --omit=optional --prefix tests/peers\``;
    if (isCi()) throw new Error(message);
    console.warn(`skipping the dicomweb-client part: ${message}`);
    return null;
  }
  return new lib.api.DICOMwebClient({ url });
}

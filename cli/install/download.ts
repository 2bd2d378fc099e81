/** Downloading a release archive to a file while computing its SHA-256. */
import { createHash } from "node:crypto";
import { CliError } from "../errors.ts";
import { type FetchFn, networkReason, statusLine } from "../http.ts";
import type { Output } from "../output.ts";

/** What was downloaded. */
export interface Download {
  bytes: number;
  sha256: string;
}

/** Time limit of a whole download. */
export const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;

/** Streams `url` into `path` (created 0600), hashing as it goes. */
export async function downloadToFile(
  fetchFn: FetchFn,
  out: Output,
  url: string,
  path: string,
): Promise<Download> {
  out.debug(1, `GET ${url}`);
  let response: Response;
  try {
    response = await fetchFn(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (err) {
    throw new CliError(`cannot reach the release server at ${url}: ${networkReason(err)}`, {
      cause: err,
    });
  }
  out.debug(1, statusLine(response));
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    throw new CliError(`cannot download ${url}: the server answered ${response.status}`, {
      hint: response.status === 404
        ? "Check the version (gateway:install --version) and GWCLI_RELEASE_URL."
        : undefined,
    });
  }
  const hash = createHash("sha256");
  let bytes = 0;
  let reported = 0;
  const lengthHeader = Number(response.headers.get("content-length"));
  const total = Number.isFinite(lengthHeader) && lengthHeader > 0 ? lengthHeader : null;
  const label = `downloading ${url.slice(url.lastIndexOf("/") + 1)}`;
  out.progress(label, 0, total);
  const file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
  try {
    for await (const chunk of response.body) {
      hash.update(chunk);
      let offset = 0;
      while (offset < chunk.byteLength) offset += await file.write(chunk.subarray(offset));
      bytes += chunk.byteLength;
      out.progress(label, bytes, total);
      if (bytes - reported >= 8 << 20) {
        reported = bytes;
        out.debug(1, `downloaded ${(bytes / (1 << 20)).toFixed(0)} MiB`);
      }
    }
  } catch (err) {
    throw new CliError(`the download of ${url} failed: ${networkReason(err)}`, { cause: err });
  } finally {
    file.close();
  }
  return { bytes, sha256: hash.digest("hex") };
}

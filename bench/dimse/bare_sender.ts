/**
 * The least a Deno C-STORE sender does (`deno run --allow-read --allow-net
 * bench/dimse/bare_sender.ts [--reuse] <port> <called AE> <dir>...`): one association of the
 * gateway's DIMSE adapter to 127.0.0.1:<port>, then every file of the directories in name order
 * read (`--reuse`: into one buffer), its Part 10 header parsed and its dataset sent as it is; no
 * queue, pipeline, backend or metrics. The send
 * benchmark (send.ts) runs it as a process of its own with the gateway's environment, as the floor
 * of the gateway's send path.
 */
import {
  lib,
  RawDataset,
  ScuAssociation,
  storeContexts,
} from "../../gateway/adapters/dimse/mod.ts";
import { parseP10 } from "../../gateway/dicom/mod.ts";

/** Reads `path` into `into` when it fits (one reused buffer), else into fresh memory. */
async function readInto(path: string, into: Uint8Array | undefined): Promise<Uint8Array> {
  if (!into) return await Deno.readFile(path);
  using file = await Deno.open(path);
  let at = 0;
  for (;;) {
    if (at === into.length) return await Deno.readFile(path);
    const n = await file.read(into.subarray(at));
    if (n === null) return into.subarray(0, at);
    at += n;
  }
}

/**
 * Sends every file of `dirs` (each in name order) on one association; with `reuse`, every file
 * is read into the same buffer (no fresh memory per instance).
 */
export async function sendAll(
  port: number,
  calledAet: string,
  dirs: string[],
  reuse = false,
): Promise<void> {
  const paths: string[] = [];
  for (const dir of dirs) {
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) if (e.isFile) names.push(e.name);
    paths.push(...names.sort().map((n) => `${dir}/${n}`));
  }
  if (paths.length === 0) return;
  const first = parseP10(await Deno.readFile(paths[0]));
  const buffer = reuse ? new Uint8Array(64 << 20) : undefined;
  const assoc = await ScuAssociation.open({
    host: "127.0.0.1",
    port,
    callingAet: "BARE",
    calledAet,
    contexts: storeContexts([first]),
  });
  try {
    for (const path of paths) {
      const f = parseP10(await readInto(path, buffer));
      const rq = new lib.requests.CStoreRequest(new RawDataset(f.dataset, f.meta.transferSyntax));
      rq.setAffectedSopClassUid(f.meta.sopClassUid);
      rq.setAffectedSopInstanceUid(f.meta.sopInstanceUid);
      const res = await assoc.request(rq);
      if (res.getStatus() !== 0) throw new Error(`C-STORE of ${path}: status ${res.getStatus()}`);
    }
  } finally {
    await assoc.release();
  }
}

if (import.meta.main) {
  const reuse = Deno.args[0] === "--reuse";
  const [port, aet, ...dirs] = Deno.args.slice(reuse ? 1 : 0);
  if (!Number(port) || !aet || dirs.length === 0) {
    console.error("usage: bare_sender.ts [--reuse] <port> <called AE> <dir>...");
    Deno.exit(2);
  }
  await sendAll(Number(port), aet, dirs, reuse);
}

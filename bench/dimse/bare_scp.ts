/**
 * The runtime's floor for the C-STORE receive benchmark: a minimal Deno storage SCP that only
 * receives and writes. It uses the gateway's DIMSE adapter (association negotiation, P-DATA
 * reading, C-STORE-RSP) and writes each instance straight to `<dir>/<SOP instance UID>.dcm` while
 * it arrives (one write(2) per received slice, as storescp does), without pipeline, temporary file,
 * rename, audit or metrics. What the gateway costs above this is the gateway's; what this costs
 * above `storescp` is Deno's (and the adapter's).
 *
 *   deno run -A bench/dimse/bare_scp.ts <port> <dir> [aet]
 *
 * Prints `listening <port>` once bound; stops on SIGTERM.
 */
import { DimseListener, type FileSpool, lib, negotiate } from "../../gateway/adapters/dimse/mod.ts";

/** A file written in order while an instance arrives. */
class DirectFile implements FileSpool {
  readonly #file: Deno.FsFile;
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
    this.#file = Deno.openSync(path, { write: true, create: true, truncate: true });
  }

  write(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.byteLength) at += this.#file.writeSync(bytes.subarray(at));
  }

  close(): void {
    this.#file.close();
  }

  abort(): void {
    this.#file.close();
    Deno.removeSync(this.#path);
  }
}

/** Listens on `port`, storing into `dir` as AE `aet`; resolves with the listener. */
export async function startBareScp(port: number, dir: string, aet: string): Promise<DimseListener> {
  await Deno.mkdir(dir, { recursive: true });
  const policy = { calledAet: aet, services: new Set(["echo", "store"] as const) };
  return await DimseListener.listen({
    hostname: "127.0.0.1",
    port,
    onConnection(conn) {
      conn.handler = {
        associationRequested(association) {
          const rejection = negotiate(association, policy);
          if (rejection) {
            conn.sendAssociationReject(rejection.result, rejection.source, rejection.reason);
          } else conn.sendAssociationAccept();
        },
        storeSpool: (_sopClass, sopInstance) =>
          /^[0-9.]{1,64}$/.test(sopInstance)
            ? new DirectFile(`${dir}/${sopInstance}.dcm`)
            : undefined,
        store(request, reply, spool) {
          const res = lib.responses.CStoreResponse.fromRequest(request);
          if (spool) {
            (spool as DirectFile).close();
            res.setStatus(0x0000);
          } else res.setStatus(0xa700);
          reply(res);
        },
      };
    },
  });
}

if (import.meta.main) {
  const [port, dir, aet] = Deno.args;
  if (!port || !dir) {
    console.error("usage: deno run -A bench/dimse/bare_scp.ts <port> <dir> [aet]");
    Deno.exit(2);
  }
  const listener = await startBareScp(Number(port), dir, aet ?? "BARESCP");
  console.log(`listening ${listener.port}`);
  Deno.addSignalListener("SIGTERM", async () => {
    await listener.close();
    Deno.exit(0);
  });
}

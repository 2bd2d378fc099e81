/**
 * DCMTK's modality worklist programs for tests: `wlmscpfs` (a worklist SCP serving `.wl` files of
 * one directory per AE title) started on a free loopback port in a temporary directory, with its
 * worklist files made by `dump2dcm` from the text dumps of fixtures/worklist/ (or written from
 * DICOM JSON), and `findscu -W` (the modality asking) whose responses are read back as datasets.
 */
import { fromDicomJson, parseP10, TS, writeDataset, writeP10 } from "../../gateway/dicom/mod.ts";
import type { DicomJson } from "../../gateway/dicom/mod.ts";
import { REPO_ROOT } from "./paths.ts";
import { freePort } from "./ports.ts";
import { type CapturedProcess, runCommand, spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";
import { canConnect } from "./wait.ts";

/** DCMTK leaves Nagle's algorithm on unless told (a delayed-ACK wait per response on loopback). */
const DCMTK_ENV: Record<string, string> = { TCP_NODELAY: "1" };

/** The folder of the worklist dumps shipped with the tests. */
export const WORKLIST_FIXTURES = `${REPO_ROOT}/fixtures/worklist`;

/** A running `wlmscpfs`. */
export interface WorklistScp {
  aet: string;
  port: number;
  /** The folder of its worklist files (`<dir>/<aet>`). */
  folder: string;
  process: CapturedProcess;
  /** Adds a worklist item written from DICOM JSON (e.g. a transform's output). */
  addItem(name: string, item: DicomJson): Promise<void>;
  stop(): Promise<void>;
}

/** `dump2dcm` of a text dump into a `.wl` file; throws with DCMTK's message when it fails. */
export async function dumpToDicom(dump: string, out: string): Promise<void> {
  const r = await runCommand("dump2dcm", ["-q", dump, out]);
  if (r.code !== 0) throw new Error(`dump2dcm ${dump} failed: ${r.stderr}${r.stdout}`);
}

/**
 * Starts `wlmscpfs` as AE `aet` serving the worklist items of `dumps` (file names in
 * fixtures/worklist/, made into `.wl` files with dump2dcm).
 */
export async function startWlmscpfs(
  dumps: string[],
  opts: { aet?: string } = {},
): Promise<WorklistScp> {
  const aet = opts.aet ?? "WLMSCP";
  const dir = await tempDir("wlmscpfs-");
  const folder = `${dir}/${aet}`;
  await Deno.mkdir(folder);
  // wlmscpfs reads a folder only when it holds a file named lockfile.
  await Deno.writeTextFile(`${folder}/lockfile`, "");
  for (const dump of dumps) {
    await dumpToDicom(
      `${WORKLIST_FIXTURES}/${dump}`,
      `${folder}/${dump.replace(/\.dump$/, "")}.wl`,
    );
  }
  const port = freePort();
  const process = spawnCaptured("wlmscpfs", ["-dfp", dir, String(port)], {
    env: DCMTK_ENV,
    afterStop: () => removeDir(dir),
  });
  await waitReady(process, {
    name: "wlmscpfs",
    check: () => canConnect(port),
    description: `wlmscpfs listening on ${port}`,
    timeoutMs: 10_000,
  });
  return {
    aet,
    port,
    folder,
    process,
    addItem: async (name, item) => {
      const dataset = writeDataset(fromDicomJson(item), TS.explicitLE);
      const file = writeP10({
        transferSyntax: TS.explicitLE,
        // Worklist files carry no SOP class of their own; DCMTK's samples use this private one.
        sopClassUid: "1.2.276.0.7230010.3.1.0.1",
        sopInstanceUid: "2.25.1",
      }, dataset);
      await Deno.writeFile(`${folder}/${name}.wl`, file);
    },
    stop: async () => void await process.stop(),
  };
}

/** The outcome of one `findscu -W`. */
export interface WorklistAnswer {
  /** Exit code of findscu (0: the C-FIND completed). */
  code: number;
  /** The data sets of the pending responses, in order, as received (Explicit VR Little Endian). */
  datasets: Uint8Array[];
  /** findscu's output, for failure messages. */
  output: string;
}

/**
 * Asks `calledAet` at `port` with `findscu -W` (Modality Worklist Information Model) for the
 * query dump `query` of fixtures/worklist/; the responses' data sets are read back from the files
 * findscu extracts (`-X`).
 */
export async function findscuWorklist(
  port: number,
  calledAet: string,
  query: string,
): Promise<WorklistAnswer> {
  const dir = await tempDir("findscu-wl-");
  try {
    await dumpToDicom(`${WORKLIST_FIXTURES}/${query}`, `${dir}/query.dcm`);
    const r = await runCommand(
      "findscu",
      ["-W", "-aet", "MODALITY", "-aec", calledAet, "-X", "127.0.0.1", String(port), "query.dcm"],
      { cwd: dir, env: DCMTK_ENV, timeoutMs: 30_000 },
    );
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) if (/^rsp\d+\.dcm$/.test(e.name)) names.push(e.name);
    names.sort();
    const datasets: Uint8Array[] = [];
    for (const name of names) {
      datasets.push(parseP10(await Deno.readFile(`${dir}/${name}`)).dataset);
    }
    return { code: r.code, datasets, output: `${r.stdout}${r.stderr}` };
  } finally {
    await removeDir(dir);
  }
}

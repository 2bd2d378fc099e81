/**
 * The benchmark's HL7 sender: `connections` MLLP connections, each sending its share of the
 * messages one at a time and waiting for the ACK before the next (as HL7 senders do), or the same
 * over HTTP (`x-application/hl7-v2+er7` POSTs, one request at a time per sender). Returns the
 * wall time of the whole run; every answer is checked to be an AA.
 */
import { encodeMllpFrame, MllpFrameReader } from "../../gateway/adapters/mllp/mod.ts";

const DECODER = new TextDecoder();

/** An ADT^A01 of about 600 bytes with control id `id`. */
export function benchMessage(id: string): string {
  return [
    `MSH|^~\\&|BENCH|HOSP|RECEIVER|LAB|20260101120000||ADT^A01^ADT_A01|${id}|P|2.5.1`,
    `EVN|A01|20260101120000`,
    `PID|1||${id}^^^HOSP^MR~99${id}^^^SSA^SS||DOE^JANE^Q^^^^L||19700101|F|||1 MAIN ST^^SPRINGFIELD^IL^62701^USA^H||^PRN^PH^^1^217^5550100|||S||${id}`,
    `NK1|1|DOE^JOHN|SPO^Spouse^HL70063|1 MAIN ST^^SPRINGFIELD^IL^62701^USA|^PRN^PH^^1^217^5550101`,
    `PV1|1|I|WARD^101^A^HOSP||||1234^SMITH^ADAM^^^DR|||MED||||7|||1234^SMITH^ADAM^^^DR|IN||||||||||||||||||||||||||20260101120000`,
    `AL1|1|DA|PEN^Penicillin^L|SV|Hives`,
    `DG1|1||I10^Essential hypertension^I10|||A`,
  ].join("\r");
}

/** Splits `count` message numbers over `senders`, round robin. */
function shares(count: number, senders: number): number[][] {
  const out: number[][] = Array.from({ length: senders }, () => []);
  for (let i = 0; i < count; i++) out[i % senders].push(i);
  return out;
}

/** Sends `count` messages over `connections` MLLP connections to `port`; milliseconds taken. */
export async function sendMllp(
  port: number,
  count: number,
  connections: number,
  prefix: string,
): Promise<number> {
  const started = performance.now();
  await Promise.all(
    shares(count, connections).map(async (numbers) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.setNoDelay(true);
      const reader = new MllpFrameReader({ maxFrameBytes: 1 << 20 });
      const buf = new Uint8Array(64 * 1024);
      try {
        for (const n of numbers) {
          const id = `${prefix}${n}`;
          const frame = encodeMllpFrame(new TextEncoder().encode(benchMessage(id)));
          let written = 0;
          while (written < frame.byteLength) written += await conn.write(frame.subarray(written));
          let frames: Uint8Array[] = [];
          while (frames.length === 0) {
            const read = await conn.read(buf);
            if (read === null) throw new Error(`connection closed before the ACK of ${id}`);
            frames = reader.push(buf.subarray(0, read));
          }
          checkAck(DECODER.decode(frames[0]), id);
        }
      } finally {
        conn.close();
      }
    }),
  );
  return performance.now() - started;
}

/** Posts `count` messages as ER7 to `url` from `senders` concurrent senders; milliseconds taken. */
export async function sendHttp(
  url: string,
  count: number,
  senders: number,
  prefix: string,
): Promise<number> {
  const started = performance.now();
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: senders });
  try {
    await Promise.all(
      shares(count, senders).map(async (numbers) => {
        for (const n of numbers) {
          const id = `${prefix}${n}`;
          const res = await fetch(url, {
            method: "POST",
            headers: { "content-type": "x-application/hl7-v2+er7" },
            body: benchMessage(id),
            client,
          });
          const text = await res.text();
          if (res.status !== 200) {
            throw new Error(`${id}: HTTP ${res.status} ${text.slice(0, 200)}`);
          }
          checkAck(text, id);
        }
      }),
    );
  } finally {
    client.close();
  }
  return performance.now() - started;
}

function checkAck(text: string, id: string): void {
  const msa = text.split(/\r\n?|\n/).find((s) => s.startsWith("MSA|"))?.split("|");
  if (msa?.[1] !== "AA" && msa?.[1] !== "CA") {
    throw new Error(`${id}: no AA: ${text.slice(0, 300)}`);
  }
  if (msa[2] !== id) throw new Error(`${id}: ACK of ${msa[2]}`);
}

/** A raw MLLP sender over Deno.connect for tests: frames out, frames in, and the close seen. */
import { encodeMllpFrame, MllpFrameReader } from "../../gateway/adapters/mllp/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** One MLLP connection to a listener. */
export class MllpTestClient {
  readonly conn: Deno.Conn;
  readonly #reader = new MllpFrameReader({ maxFrameBytes: 16 * 1024 * 1024 });
  readonly #frames: string[] = [];
  #closed = false;
  #waiters: (() => void)[] = [];

  private constructor(conn: Deno.Conn) {
    this.conn = conn;
    void this.#pump();
  }

  /** Speaks MLLP over an open connection (a TLS one, say). */
  static over(conn: Deno.Conn): MllpTestClient {
    return new MllpTestClient(conn);
  }

  /** Connects to `port` on loopback. */
  static async connect(port: number): Promise<MllpTestClient> {
    return new MllpTestClient(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  async #pump(): Promise<void> {
    const buf = new Uint8Array(65536);
    try {
      while (true) {
        const n = await this.conn.read(buf);
        if (n === null) break;
        for (const f of this.#reader.push(buf.subarray(0, n))) this.#frames.push(dec.decode(f));
        this.#wake();
      }
    } catch {
      // reset
    }
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Sends raw bytes (framing edge cases). */
  async raw(bytes: Uint8Array | string): Promise<void> {
    const b = typeof bytes === "string" ? enc.encode(bytes) : bytes;
    for (let at = 0; at < b.byteLength;) at += await this.conn.write(b.subarray(at));
  }

  /** Sends one message framed. */
  send(message: string): Promise<void> {
    return this.raw(encodeMllpFrame(enc.encode(message)));
  }

  /** The next answer frame's text; rejects when the connection closes first or after `ms`. */
  async next(ms = 10_000): Promise<string> {
    const deadline = Date.now() + ms;
    while (this.#frames.length === 0) {
      if (this.#closed) throw new Error("connection closed before an answer");
      if (Date.now() > deadline) throw new Error(`no answer within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.#frames.shift()!;
  }

  /** Sends a message and returns its first answer. */
  async request(message: string): Promise<string> {
    await this.send(message);
    return await this.next();
  }

  /** Resolves true once the gateway closed the connection (false after `ms`). */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.#closed) {
      if (Date.now() > deadline) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  }

  /** Closes the client's side. */
  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/** An ER7 message (segments joined by `\r`) with the given MSH-9, MSH-10 and MSH-15/16. */
export function hl7Message(
  type: string,
  controlId: string,
  opts: { facility?: string; acceptAck?: string; appAck?: string; version?: string } = {},
): string {
  const msh = [
    "MSH",
    "^~\\&",
    "SENDER",
    opts.facility ?? "NORTH",
    "GATEWAY",
    "HOSP",
    "20240102030405",
    "",
    type,
    controlId,
    "P",
    opts.version ?? "2.5.1",
    "",
    "",
    opts.acceptAck ?? "",
    opts.appAck ?? "",
  ].join("|").replace(/\|+$/, "");
  return [
    msh,
    "EVN|A01|20240102030405",
    "PID|1||12345^^^HOSP^MR||Doe^Jane||19800101|F",
    "PV1|1|I|W^101^1",
  ].join("\r") + "\r";
}

/** MSA-1 and MSA-2 of an ACK, and its ERR segments' text. */
export function ackOf(text: string): { code: string; controlId: string; err: string } {
  const segments = text.split("\r");
  const msa = segments.find((s) => s.startsWith("MSA"))?.split("|") ?? [];
  const err = segments.filter((s) => s.startsWith("ERR")).join("\n");
  return { code: msa[1] ?? "", controlId: msa[2] ?? "", err };
}

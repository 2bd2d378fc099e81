/**
 * DIMSE messages from the PDVs of P-DATA-TF PDUs (PduReader events). A C-STORE-RQ is received here
 * end to end: its command set is decoded without dcmjs, and its dataset fragments are copied once,
 * as they arrive, into the instance file (InstanceBuffer). Every other message, and every PDU that
 * is not P-DATA-TF, is handed on as PDUs to dcmjs-dimse's own processing, in stream order.
 */
import { Buffer } from "node:buffer";
import { C_STORE_RQ, NO_DATASET } from "./command_set.ts";
import type { InstanceBuffer } from "./instance_buffer.ts";
import { COMMAND, LAST, pdvHeader } from "./pdata.ts";
import type { PduEvents } from "./pdu_reader.ts";

/** Where messages go. */
export interface MessageTarget {
  /** A PDU for dcmjs-dimse's processing. */
  library(pdu: Buffer): void;
  /** Decode a command set (naturalized elements). */
  decodeCommand(bytes: Uint8Array): Record<string, unknown>;
  /** The buffer a C-STORE-RQ's dataset is assembled in. */
  storeBuffer(contextId: number, command: Record<string, unknown>): InstanceBuffer;
  /** A complete C-STORE-RQ. */
  store(contextId: number, command: Record<string, unknown>, file: InstanceBuffer): void;
}

/** What the PDVs being received belong to. */
const enum Mode {
  /** Between messages: a command comes next. */
  Idle,
  /** The dataset of a message dcmjs-dimse processes. */
  Library,
  /** The dataset of a C-STORE-RQ received here. */
  Store,
}

/** A C-STORE-RQ whose dataset is arriving. */
interface Store {
  contextId: number;
  command: Record<string, unknown>;
  file: InstanceBuffer;
}

/** Routes PDVs: C-STORE-RQ to the store fast path, the rest to the library. */
export class MessageRouter implements PduEvents {
  readonly #target: MessageTarget;
  #mode = Mode.Idle;
  #store: Store | undefined;
  /** Fragments of the command set being received. */
  #command: Uint8Array[] = [];
  #commandLength = 0;
  /** The PDV being received: its context, control header, and (for the library) its PDU. */
  #contextId = 0;
  #control = 0;
  #pdu: Uint8Array | undefined;
  #pduFilled = 0;

  constructor(target: MessageTarget) {
    this.#target = target;
  }

  /** A non-P-DATA PDU: straight to the library. */
  pdu(pdu: Buffer): void {
    this.#target.library(pdu);
  }

  pdvStart(contextId: number, control: number, length: number): void {
    this.#contextId = contextId;
    this.#control = control;
    const command = (control & COMMAND) !== 0;
    if (this.#mode === Mode.Store) {
      if (command || contextId !== this.#store!.contextId) {
        throw new Error(
          `a C-STORE dataset was interrupted by a ${command ? "command" : "dataset"} fragment ` +
            `on presentation context ${contextId}`,
        );
      }
      return;
    }
    if (this.#mode === Mode.Idle && command) return;
    // A dataset fragment for the library: re-framed as a P-DATA-TF holding this PDV alone.
    this.#pdu = new Uint8Array(12 + length);
    this.#pdu.set(pdvHeader(contextId, control, length));
    this.#pduFilled = 12;
  }

  pdvValue(piece: Uint8Array): void {
    if (this.#mode === Mode.Store) {
      this.#store!.file.write(piece);
    } else if (this.#pdu) {
      this.#pdu.set(piece, this.#pduFilled);
      this.#pduFilled += piece.byteLength;
    } else {
      this.#command.push(piece.slice());
      this.#commandLength += piece.byteLength;
    }
  }

  pdvEnd(): void {
    const last = (this.#control & LAST) !== 0;
    if (this.#mode === Mode.Store) {
      if (!last) return;
      const store = this.#store!;
      this.#store = undefined;
      this.#mode = Mode.Idle;
      this.#target.store(store.contextId, store.command, store.file);
      return;
    }
    if (this.#pdu) {
      const pdu = this.#pdu;
      this.#pdu = undefined;
      if (last) this.#mode = Mode.Idle;
      this.#target.library(Buffer.from(pdu.buffer, pdu.byteOffset, pdu.byteLength));
      return;
    }
    if (last) this.#commandDone();
  }

  /** The last command fragment arrived: a C-STORE-RQ stays here, anything else goes on. */
  #commandDone(): void {
    const bytes = concat(this.#command, this.#commandLength);
    this.#command = [];
    this.#commandLength = 0;
    const contextId = this.#contextId;
    const command = this.#target.decodeCommand(bytes);
    const hasDataset = command.CommandDataSetType !== NO_DATASET;
    if (command.CommandField === C_STORE_RQ && hasDataset) {
      this.#mode = Mode.Store;
      this.#store = { contextId, command, file: this.#target.storeBuffer(contextId, command) };
      return;
    }
    this.#mode = hasDataset ? Mode.Library : Mode.Idle;
    const pdu = new Uint8Array(12 + bytes.byteLength);
    pdu.set(pdvHeader(contextId, COMMAND | LAST, bytes.byteLength));
    pdu.set(bytes, 12);
    this.#target.library(Buffer.from(pdu.buffer, pdu.byteOffset, pdu.byteLength));
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * DIMSE messages from the PDVs of P-DATA-TF PDUs (PduReader events). A C-STORE-RQ is received
 * end to end: its command set is decoded, and its dataset fragments are copied once, as they
 * arrive, into the instance file (InstanceBuffer). Every other message is handed on whole (command
 * set and dataset bytes), and every PDU that is not P-DATA-TF as it is, in stream order.
 */
import { Buffer } from "node:buffer";
import { C_STORE_RQ, NO_DATASET } from "./command_set.ts";
import type { InstanceBuffer } from "./instance_buffer.ts";
import { COMMAND, LAST } from "./pdata.ts";
import { allocate, copyOf } from "./slab.ts";
import type { PduEvents } from "./pdu_reader.ts";

/** Where messages go. */
export interface MessageTarget {
  /** An association PDU (A-ASSOCIATE, A-RELEASE, A-ABORT), header included. */
  pdu(pdu: Buffer): void;
  /** A complete message other than a C-STORE-RQ with a dataset. */
  message(contextId: number, command: Record<string, unknown>, dataset?: Uint8Array): void;
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
  /** The dataset of a message handed on whole. */
  Dataset,
  /** The dataset of a C-STORE-RQ received here. */
  Store,
}

/** A C-STORE-RQ whose dataset is arriving. */
interface Store {
  contextId: number;
  command: Record<string, unknown>;
  file: InstanceBuffer;
}

/** Routes PDVs: C-STORE-RQ to the store path, the rest to whole messages. */
export class MessageRouter implements PduEvents {
  readonly #target: MessageTarget;
  #mode = Mode.Idle;
  #store: Store | undefined;
  /** Fragments of the command set being received. */
  #command: Uint8Array[] = [];
  #commandLength = 0;
  /** The PDV being received: its context and control header. */
  #contextId = 0;
  #control = 0;
  /** The message whose dataset is arriving (Mode.Dataset), and its fragments so far. */
  #message: { contextId: number; command: Record<string, unknown> } | undefined;
  #dataset: Uint8Array[] = [];
  #datasetLength = 0;

  constructor(target: MessageTarget) {
    this.#target = target;
  }

  /** A non-P-DATA PDU: handed on as it is. */
  pdu(pdu: Buffer): void {
    this.#target.pdu(pdu);
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
    if (this.#mode === Mode.Idle) {
      if (command) {
        if (this.#commandLength + length > MAX_COMMAND_SET) {
          throw new Error(`a command set is over ${MAX_COMMAND_SET >> 10} KiB`);
        }
        return;
      }
      throw new Error(`a dataset fragment on presentation context ${contextId} has no command`);
    }
    if (command || contextId !== this.#message!.contextId) {
      throw new Error(
        `a dataset was interrupted by a ${command ? "command" : "dataset"} fragment ` +
          `on presentation context ${contextId}`,
      );
    }
    if (this.#datasetLength + length > MAX_MESSAGE_DATASET) {
      throw new Error(`a ${MAX_MESSAGE_DATASET >> 20} MiB dataset limit is exceeded`);
    }
  }

  pdvValue(piece: Uint8Array): void {
    if (this.#mode === Mode.Store) {
      this.#store!.file.write(piece);
    } else if (this.#mode === Mode.Dataset) {
      this.#dataset.push(copyOf(piece));
      this.#datasetLength += piece.byteLength;
    } else {
      this.#command.push(copyOf(piece));
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
    if (this.#mode === Mode.Dataset) {
      if (!last) return;
      const { contextId, command } = this.#message!;
      const dataset = concat(this.#dataset, this.#datasetLength);
      this.#message = undefined;
      this.#dataset = [];
      this.#datasetLength = 0;
      this.#mode = Mode.Idle;
      this.#target.message(contextId, command, dataset);
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
    if (hasDataset) {
      this.#mode = Mode.Dataset;
      this.#message = { contextId, command };
      return;
    }
    this.#target.message(contextId, command);
  }
}

/** Largest command set (a few hundred bytes in practice), 64 KiB. */
const MAX_COMMAND_SET = 64 << 10;

/**
 * Largest dataset of a message other than C-STORE-RQ (a C-FIND identifier, a C-MOVE key, a
 * response's dataset): 64 MiB. C-STORE datasets go to their file and are not held here.
 */
const MAX_MESSAGE_DATASET = 64 << 20;

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = allocate(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

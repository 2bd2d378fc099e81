/**
 * The association PDUs of the DICOM upper layer (PS3.8 9.3): A-ASSOCIATE-RQ, -AC and -RJ,
 * A-RELEASE-RQ and -RP, A-ABORT, written and read here. The negotiated association is kept in
 * dcmjs-dimse's `Association` model through its public methods only (negotiate.ts and the
 * handlers read it); nothing of the library's network layer is used.
 *
 * Reading is bounded by the PDU: every length is checked against what is left, so a malformed
 * PDU is an error naming the problem, never a read past the end.
 */
import { IMPLEMENTATION_CLASS_UID, IMPLEMENTATION_VERSION, TS } from "../../dicom/mod.ts";
import { lib, type LibAssociation } from "./dcmjs_dimse.ts";

/** PDU types (PS3.8 9.3.1). */
export const PDU = {
  associateRq: 0x01,
  associateAc: 0x02,
  associateRj: 0x03,
  releaseRq: 0x05,
  releaseRp: 0x06,
  abort: 0x07,
} as const;

/** The DICOM application context name (PS3.7 A.2.1). */
const APPLICATION_CONTEXT = "1.2.840.10008.3.1.1.1";

/** Item types (PS3.8 9.3.2, and PS3.7 D.3.3 for user information sub-items). */
const ITEM = {
  applicationContext: 0x10,
  contextRq: 0x20,
  contextAc: 0x21,
  abstractSyntax: 0x30,
  transferSyntax: 0x40,
  userInformation: 0x50,
  maxLength: 0x51,
  implementationClass: 0x52,
  roleSelection: 0x54,
  implementationVersion: 0x55,
  userIdentityRq: 0x58,
} as const;

const ASCII = new TextEncoder();
const LATIN1 = new TextDecoder("latin1");

/** Builds a PDU from items; lengths are filled in when an item or the PDU is closed. */
class PduWriter {
  #bytes = new Uint8Array(512);
  #length = 0;
  readonly #open: number[] = [];

  #room(n: number): void {
    if (this.#length + n <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + n));
    grown.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = grown;
  }

  u8(v: number): this {
    this.#room(1);
    this.#bytes[this.#length++] = v;
    return this;
  }

  u16(v: number): this {
    return this.u8((v >>> 8) & 0xff).u8(v & 0xff);
  }

  u32(v: number): this {
    return this.u16((v >>> 16) & 0xffff).u16(v & 0xffff);
  }

  zeros(n: number): this {
    for (let i = 0; i < n; i++) this.u8(0);
    return this;
  }

  text(s: string): this {
    const b = ASCII.encode(s);
    this.#room(b.length);
    this.#bytes.set(b, this.#length);
    this.#length += b.length;
    return this;
  }

  /** An AE title: 16 bytes, space padded. */
  aet(s: string): this {
    return this.text(s.slice(0, 16).padEnd(16, " "));
  }

  /** Opens an item (type, reserved, 16-bit length); close it with {@link end}. */
  item(type: number): this {
    this.u8(type).u8(0);
    this.#open.push(this.#length);
    return this.u16(0);
  }

  /** A 16-bit length field whose value follows; close it with {@link end}. */
  length16(): this {
    this.#open.push(this.#length);
    return this.u16(0);
  }

  end(): this {
    const at = this.#open.pop()!;
    const n = this.#length - at - 2;
    if (n > 0xffff) throw new Error("an association item is longer than 65535 bytes");
    this.#bytes[at] = n >>> 8;
    this.#bytes[at + 1] = n & 0xff;
    return this;
  }

  /** The PDU: type, reserved, 32-bit length, then what was written. */
  pdu(type: number): Uint8Array {
    const out = new Uint8Array(6 + this.#length);
    out[0] = type;
    new DataView(out.buffer).setUint32(2, this.#length);
    out.set(this.#bytes.subarray(0, this.#length), 6);
    return out;
  }
}

/** Reads a PDU's body (after its 6-byte header), refusing reads past its end. */
class PduReader {
  readonly #b: Uint8Array;
  #at: number;
  readonly #end: number;

  constructor(b: Uint8Array, at: number, end: number) {
    this.#b = b;
    this.#at = at;
    this.#end = end;
  }

  get left(): number {
    return this.#end - this.#at;
  }

  #need(n: number, what: string): void {
    if (n > this.left) throw new Error(`truncated association PDU: ${what} runs past its end`);
  }

  u8(what: string): number {
    this.#need(1, what);
    return this.#b[this.#at++];
  }

  u16(what: string): number {
    this.#need(2, what);
    const v = (this.#b[this.#at] << 8) | this.#b[this.#at + 1];
    this.#at += 2;
    return v;
  }

  u32(what: string): number {
    this.#need(4, what);
    const v = new DataView(this.#b.buffer, this.#b.byteOffset + this.#at, 4).getUint32(0);
    this.#at += 4;
    return v;
  }

  skip(n: number, what: string): void {
    this.#need(n, what);
    this.#at += n;
  }

  /** Text of `n` bytes without padding (spaces for AE titles, NUL for some UIDs). */
  text(n: number, what: string): string {
    this.#need(n, what);
    const s = LATIN1.decode(this.#b.subarray(this.#at, this.#at + n));
    this.#at += n;
    return s.replace(/[\0 ]+$/, "").replace(/^ +/, "");
  }

  /** A reader over the next `n` bytes (an item's value), which this one skips. */
  sub(n: number, what: string): PduReader {
    this.#need(n, what);
    const r = new PduReader(this.#b, this.#at, this.#at + n);
    this.#at += n;
    return r;
  }
}

/** The body of a PDU whose header says `type`; throws when it is another or malformed. */
function body(pdu: Uint8Array, type: number): PduReader {
  if (pdu.length < 6 || pdu[0] !== type) {
    throw new Error(`expected a PDU of type ${type}, got ${pdu[0] ?? "nothing"}`);
  }
  const length = new DataView(pdu.buffer, pdu.byteOffset, pdu.length).getUint32(2);
  if (length !== pdu.length - 6) throw new Error("association PDU length does not match its bytes");
  return new PduReader(pdu, 6, pdu.length);
}

/** The fixed part of A-ASSOCIATE-RQ and -AC: version, AE titles, reserved bytes. */
function writeHead(w: PduWriter, a: LibAssociation): void {
  w.u16(1).zeros(2).aet(a.getCalledAeTitle()).aet(a.getCallingAeTitle()).zeros(32);
  w.item(ITEM.applicationContext).text(APPLICATION_CONTEXT).end();
}

/** Role selection items for the contexts that carry roles, one per abstract syntax. */
function writeRoles(w: PduWriter, a: LibAssociation, acceptedOnly: boolean): void {
  const done = new Set<string>();
  for (const { id } of a.getPresentationContexts()) {
    const pc = a.getPresentationContext(id);
    const scu = pc.getUserRole();
    const scp = pc.getProviderRole();
    if (scu === undefined && scp === undefined) continue;
    if (acceptedOnly && pc.getResult() !== lib.constants.PresentationContextResult.Accept) continue;
    const uid = pc.getAbstractSyntaxUid();
    if (done.has(uid)) continue;
    done.add(uid);
    w.item(ITEM.roleSelection).length16().text(uid).end().u8(scu ? 1 : 0).u8(scp ? 1 : 0).end();
  }
}

/** User information: maximum length we receive, our implementation, roles. */
function writeUserInformation(
  w: PduWriter,
  a: LibAssociation,
  receiveLimit: number,
  acceptedRolesOnly: boolean,
): void {
  w.item(ITEM.userInformation);
  w.item(ITEM.maxLength).u32(receiveLimit).end();
  w.item(ITEM.implementationClass).text(IMPLEMENTATION_CLASS_UID).end();
  writeRoles(w, a, acceptedRolesOnly);
  w.item(ITEM.implementationVersion).text(IMPLEMENTATION_VERSION).end();
  w.end();
}

/** A-ASSOCIATE-RQ proposing `a`'s presentation contexts; we receive PDUs up to `receiveLimit`. */
export function encodeAssociateRequest(a: LibAssociation, receiveLimit: number): Uint8Array {
  const w = new PduWriter();
  writeHead(w, a);
  for (const { id } of a.getPresentationContexts()) {
    const pc = a.getPresentationContext(id);
    w.item(ITEM.contextRq).u8(id).zeros(3);
    w.item(ITEM.abstractSyntax).text(pc.getAbstractSyntaxUid()).end();
    for (const ts of pc.getTransferSyntaxUids()) w.item(ITEM.transferSyntax).text(ts).end();
    w.end();
  }
  writeUserInformation(w, a, receiveLimit, false);
  return w.pdu(PDU.associateRq);
}

/** A-ASSOCIATE-AC with every context's result (negotiate.ts set them). */
export function encodeAssociateAccept(a: LibAssociation, receiveLimit: number): Uint8Array {
  const w = new PduWriter();
  writeHead(w, a);
  for (const { id } of a.getPresentationContexts()) {
    const pc = a.getPresentationContext(id);
    w.item(ITEM.contextAc).u8(id).u8(0).u8(pc.getResult()).u8(0);
    // A rejected context still carries a transfer syntax item, whose value is not significant.
    w.item(ITEM.transferSyntax).text(pc.getAcceptedTransferSyntaxUid() ?? TS.implicitLE).end();
    w.end();
  }
  writeUserInformation(w, a, receiveLimit, true);
  return w.pdu(PDU.associateAc);
}

/** Reads the user information item into `a`; roles go to every context of their syntax. */
function readUserInformation(r: PduReader, a: LibAssociation): void {
  while (r.left > 0) {
    const type = r.u8("user information item type");
    r.skip(1, "reserved byte");
    const item = r.sub(r.u16("user information item length"), "user information item");
    switch (type) {
      case ITEM.maxLength:
        a.setMaxPduLength(item.u32("maximum length"));
        break;
      case ITEM.implementationClass:
        a.setImplementationClassUid(item.text(item.left, "implementation class UID"));
        break;
      case ITEM.implementationVersion:
        a.setImplementationVersion(item.text(item.left, "implementation version"));
        break;
      case ITEM.roleSelection: {
        const uid = item.text(item.u16("role selection UID length"), "role selection UID");
        const scu = item.u8("SCU role") === 1;
        const scp = item.u8("SCP role") === 1;
        for (const { id } of a.getPresentationContexts()) {
          const pc = a.getPresentationContext(id);
          if (pc.getAbstractSyntaxUid() !== uid) continue;
          pc.setUserRole(scu);
          pc.setProviderRole(scp);
        }
        break;
      }
      case ITEM.userIdentityRq: {
        a.setUserIdentityType(item.u8("user identity type"));
        a.setUserIdentityPositiveResponseRequested(item.u8("positive response requested") === 1);
        a.setUserIdentityPrimaryField(item.text(item.u16("primary field length"), "primary field"));
        const secondary = item.left >= 2 ? item.u16("secondary field length") : 0;
        a.setUserIdentitySecondaryField(item.text(secondary, "secondary field"));
        a.setNegotiateUserIdentity(true);
        break;
      }
      default:
        // Asynchronous operations window, extended negotiation: not used, so not answered
        // (the defaults of PS3.7 D.3.3 apply).
        break;
    }
  }
}

/** Reads an A-ASSOCIATE-RQ into a new association. */
export function decodeAssociateRequest(pdu: Uint8Array): LibAssociation {
  const r = body(pdu, PDU.associateRq);
  r.u16("protocol version");
  r.skip(2, "reserved bytes");
  const called = r.text(16, "called AE title");
  const calling = r.text(16, "calling AE title");
  r.skip(32, "reserved bytes");
  const a = new lib.association.Association(calling, called);
  // Roles are read after every context is known, whatever the order of the items.
  let userInformation: PduReader | undefined;
  while (r.left > 0) {
    const type = r.u8("item type");
    r.skip(1, "reserved byte");
    const item = r.sub(r.u16("item length"), "item");
    if (type === ITEM.contextRq) {
      const id = item.u8("presentation context id");
      item.skip(3, "reserved bytes");
      let added = false;
      while (item.left > 0) {
        const sub = item.u8("presentation context sub-item type");
        item.skip(1, "reserved byte");
        const uid = item.text(item.u16("syntax length"), "syntax UID");
        if (sub === ITEM.abstractSyntax && !added) {
          a.addPresentationContext(uid, id);
          added = true;
        } else if (sub === ITEM.transferSyntax && added) {
          a.addTransferSyntaxToPresentationContext(id, uid);
        }
      }
    } else if (type === ITEM.userInformation) {
      userInformation = item;
    }
  }
  if (userInformation) readUserInformation(userInformation, a);
  return a;
}

/** Reads an A-ASSOCIATE-AC: each proposed context of `a` gets its result. */
export function decodeAssociateAccept(pdu: Uint8Array, a: LibAssociation): void {
  const r = body(pdu, PDU.associateAc);
  r.skip(2 + 2 + 16 + 16 + 32, "fixed fields");
  let userInformation: PduReader | undefined;
  while (r.left > 0) {
    const type = r.u8("item type");
    r.skip(1, "reserved byte");
    const item = r.sub(r.u16("item length"), "item");
    if (type === ITEM.contextAc) {
      const id = item.u8("presentation context id");
      item.skip(1, "reserved byte");
      const result = item.u8("result");
      item.skip(1, "reserved byte");
      let ts: string | undefined;
      while (item.left > 0) {
        const sub = item.u8("presentation context sub-item type");
        item.skip(1, "reserved byte");
        const uid = item.text(item.u16("syntax length"), "transfer syntax UID");
        if (sub === ITEM.transferSyntax) ts = uid;
      }
      const pc = a.getPresentationContexts().find((c) => c.id === id)?.context;
      if (!pc) {
        throw new Error(`the A-ASSOCIATE-AC answers presentation context ${id}, never proposed`);
      }
      const accepted = result === lib.constants.PresentationContextResult.Accept;
      if (accepted) pc.setResult(result, ts);
      else pc.setResult(result);
    } else if (type === ITEM.userInformation) {
      userInformation = item;
    }
  }
  // Roles the acceptor does not confirm are not granted (PS3.7 D.3.3.4).
  for (const { context } of a.getPresentationContexts()) {
    if (context.getProviderRole()) context.setProviderRole(false);
  }
  if (userInformation) readUserInformation(userInformation, a);
}

/** A-ASSOCIATE-RJ. */
export function encodeAssociateReject(result: number, source: number, reason: number): Uint8Array {
  return new PduWriter().u8(0).u8(result).u8(source).u8(reason).pdu(PDU.associateRj);
}

/** Reads an A-ASSOCIATE-RJ. */
export function decodeAssociateReject(
  pdu: Uint8Array,
): { result: number; source: number; reason: number } {
  const r = body(pdu, PDU.associateRj);
  r.skip(1, "reserved byte");
  return { result: r.u8("result"), source: r.u8("source"), reason: r.u8("reason") };
}

/** A-RELEASE-RQ or A-RELEASE-RP. */
export function encodeRelease(type: typeof PDU.releaseRq | typeof PDU.releaseRp): Uint8Array {
  return new PduWriter().zeros(4).pdu(type);
}

/** A-ABORT (source 0: service user, 2: service provider; PS3.8 9.3.8). */
export function encodeAbort(source = 0, reason = 0): Uint8Array {
  return new PduWriter().zeros(2).u8(source).u8(reason).pdu(PDU.abort);
}

/** Reads an A-ABORT. */
export function decodeAbort(pdu: Uint8Array): { source: number; reason: number } {
  const r = body(pdu, PDU.abort);
  r.skip(2, "reserved bytes");
  return { source: r.u8("source"), reason: r.u8("reason") };
}

/**
 * Association acceptance (SCP side): the called AE title must be ours, the calling one allowed,
 * and each presentation context is accepted only for an enabled service, in the transfer syntax
 * chooseSyntax picks (storage received: as the requestor prefers, compressed data included, so it
 * is stored without transcoding). Rejections carry the A-ASSOCIATE-RJ reasons of PS3.8 9.3.4.
 */
import { isStorageClass, QR_CLASSES, SOP, TS } from "../../dicom/mod.ts";
import { lib, type LibAssociation, type LibContext } from "./dcmjs_dimse.ts";

/** DIMSE services an SCP can enable. */
export type DimseService = "echo" | "find" | "get" | "move" | "store";

/** What an SCP accepts. */
export interface AcceptPolicy {
  calledAet: string;
  /** Calling AE titles allowed; undefined or empty: any. */
  allowedCallingAets?: readonly string[];
  services: ReadonlySet<DimseService>;
}

/** An A-ASSOCIATE-RJ to send. */
export interface Rejection {
  result: number;
  source: number;
  reason: number;
  why: string;
}

/** The service an abstract syntax belongs to, if any. */
export function serviceOf(abstractSyntax: string): DimseService | undefined {
  if (abstractSyntax === SOP.verification) return "echo";
  for (const s of ["find", "move", "get"] as const) {
    if (QR_CLASSES[s].includes(abstractSyntax)) return s;
  }
  return isStorageClass(abstractSyntax) ? "store" : undefined;
}

/**
 * What a presentation context is for, which decides the transfer syntax accepted (chooseSyntax):
 * - `service`: verification and query/retrieve;
 * - `receive`: storage we receive (C-STORE, C-MOVE destination), stored as received;
 * - `send`: storage the requestor takes the SCP role for (C-GET sub-operations we send).
 */
export type ContextUse = "service" | "receive" | "send";

const UNCOMPRESSED_LE: readonly string[] = [TS.explicitLE, TS.implicitLE];

/**
 * The transfer syntax to accept among `proposed` (in the requestor's order), or undefined. PS3.8
 * lets the acceptor pick one per context and obliges the requestor to send in it:
 * - `service`: Explicit VR Little Endian, else Implicit.
 * - `receive`: the requestor's preference decides, as the data is stored as received: its first
 *   listed syntax, except that Explicit VR Little Endian stands for either uncompressed Little
 *   Endian syntax when proposed (`[JPEG Lossless, Explicit LE, ...]` accepts JPEG Lossless;
 *   `[Implicit LE, Explicit LE, JPEG]` accepts Explicit LE). Explicit VR Big Endian only when
 *   nothing else is proposed; Deflated never.
 * - `send`: Explicit VR Little Endian, else Implicit, else the first proposed syntax but Deflated
 *   (the gateway converts only between the uncompressed Little Endian syntaxes).
 */
export function chooseSyntax(proposed: readonly string[], use: ContextUse): string | undefined {
  const le = proposed.includes(TS.explicitLE)
    ? TS.explicitLE
    : proposed.includes(TS.implicitLE)
    ? TS.implicitLE
    : undefined;
  if (use === "service") return le;
  if (use === "send") return le ?? proposed.find((t) => t !== TS.deflatedLE);
  const first = proposed.find((t) => t !== TS.deflatedLE && t !== TS.explicitBE);
  if (first === undefined) return proposed.find((t) => t === TS.explicitBE);
  return UNCOMPRESSED_LE.includes(first) ? le : first;
}

/** How the context `pc` of an association under `policy` is used. */
function useOf(pc: LibContext, service: DimseService, policy: AcceptPolicy): ContextUse {
  if (service !== "store") return "service";
  // A requestor proposing the SCP role for a storage class wants C-GET sub-operations on it.
  return pc.getProviderRole() === true && policy.services.has("get") ? "send" : "receive";
}

/**
 * Check an association request and set every context's result. Returns the rejection to send
 * (called AE or calling AE refused), or undefined to accept.
 */
export function negotiate(
  association: LibAssociation,
  policy: AcceptPolicy,
): Rejection | undefined {
  const { RejectResult, RejectSource, RejectReason, PresentationContextResult: R } = lib.constants;
  const called = association.getCalledAeTitle().trim();
  const calling = association.getCallingAeTitle().trim();
  if (called !== policy.calledAet) {
    return {
      result: RejectResult.Permanent,
      source: RejectSource.ServiceUser,
      reason: RejectReason.CalledAeNotRecognized,
      why: `called AE title "${called}" is not "${policy.calledAet}"`,
    };
  }
  const allowed = policy.allowedCallingAets;
  if (allowed?.length && !allowed.includes(calling)) {
    return {
      result: RejectResult.Permanent,
      source: RejectSource.ServiceUser,
      reason: RejectReason.CallingAeNotRecognized,
      why: `calling AE title "${calling}" is not allowed`,
    };
  }
  for (const { id } of association.getPresentationContexts()) {
    const pc = association.getPresentationContext(id);
    const service = serviceOf(pc.getAbstractSyntaxUid());
    // Storage contexts serve C-STORE received (store) and our C-GET sub-operations (get).
    const enabled = service === "store"
      ? policy.services.has("store") || policy.services.has("get")
      : service !== undefined && policy.services.has(service);
    if (!enabled) {
      pc.setResult(R.RejectAbstractSyntaxNotSupported);
      continue;
    }
    const ts = chooseSyntax(pc.getTransferSyntaxUids(), useOf(pc, service!, policy));
    if (ts) pc.setResult(R.Accept, ts);
    else pc.setResult(R.RejectTransferSyntaxesNotSupported);
  }
  return undefined;
}

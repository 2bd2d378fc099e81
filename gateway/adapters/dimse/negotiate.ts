/**
 * Association acceptance (SCP side): the called AE title must be ours, the calling one allowed,
 * and each presentation context is accepted only for an enabled service, with Explicit or Implicit
 * VR Little Endian (storage contexts also accept their proposed syntax as-is, so compressed data is
 * stored without transcoding). Rejections carry the A-ASSOCIATE-RJ reasons of PS3.8 9.3.4.
 */
import { isStorageClass, QR_CLASSES, SOP, TS } from "../../dicom/mod.ts";
import { lib, type LibAssociation } from "./lib.ts";

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

/** The transfer syntax to accept from the proposed ones, or undefined. */
function chooseSyntax(proposed: string[], storage: boolean): string | undefined {
  if (proposed.includes(TS.explicitLE)) return TS.explicitLE;
  if (proposed.includes(TS.implicitLE)) return TS.implicitLE;
  return storage ? proposed.find((t) => t !== TS.deflatedLE) : undefined;
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
    const ts = chooseSyntax(pc.getTransferSyntaxUids(), service === "store");
    if (ts) pc.setResult(R.Accept, ts);
    else pc.setResult(R.RejectTransferSyntaxesNotSupported);
  }
  return undefined;
}

/**
 * Which file-system failures mean "the disk cannot take this write": no space (ENOSPC), over a
 * quota (EDQUOT), an I/O error of the device (EIO) or a file system turned read-only after
 * errors (EROFS). A write that fails with one of them degrades the component that made it (a
 * request answered 507, a queue paused), never the process.
 */

/** The errno names counted as a disk failure. */
export type DiskErrorCode = "ENOSPC" | "EDQUOT" | "EIO" | "EROFS";

const CODES: ReadonlySet<string> = new Set(["ENOSPC", "EDQUOT", "EIO", "EROFS"]);
/** `os error N` in a message whose error lost its `code` (Linux errno numbers). */
const OS_ERRORS: Record<string, DiskErrorCode> = {
  "28": "ENOSPC",
  "122": "EDQUOT",
  "5": "EIO",
  "30": "EROFS",
};

/** The disk failure `err` (or an error it wraps as `cause`) reports, or undefined. */
export function diskErrorCode(err: unknown): DiskErrorCode | undefined {
  let e = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && CODES.has(code)) return code as DiskErrorCode;
    const os = /\(os error (\d+)\)/.exec(e.message)?.[1];
    if (os && OS_ERRORS[os]) return OS_ERRORS[os];
    e = e.cause;
  }
  return undefined;
}

/** A short, log-friendly description of a disk failure: `ENOSPC (no space left on the device)`. */
export function describeDiskError(code: DiskErrorCode): string {
  switch (code) {
    case "ENOSPC":
      return "ENOSPC (no space left on the device)";
    case "EDQUOT":
      return "EDQUOT (disk quota exceeded)";
    case "EIO":
      return "EIO (input/output error of the device)";
    case "EROFS":
      return "EROFS (the file system is read-only)";
  }
}

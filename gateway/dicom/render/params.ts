/**
 * The parameters of a WADO-RS rendered or thumbnail request (PS3.18 8.3.5): the media type from
 * the `accept` query parameter or the Accept header (`image/jpeg`, the default, or `image/png`),
 * `quality` (1-100, JPEG), `window=center,width[,function]` (linear, linear-exact, sigmoid) and
 * `viewport=width,height` (the image is scaled to fit, keeping its aspect ratio). A thumbnail
 * is shrunk to fit 200 x 200 (never enlarged) unless a viewport is given. Bad values are 400, an unacceptable media type
 * 406, a parameter this renderer does not support (a cropping viewport) 400 saying so;
 * `annotation` and `iccprofile` are accepted and ignored (no burned-in text, no ICC profile).
 */
import { parseMediaType } from "../../codecs/mod.ts";
import { GatewayError } from "../../errors.ts";

/** Media types a rendering can be sent as. */
export const RENDERED_TYPES = ["image/jpeg", "image/png"] as const;
export type RenderedType = typeof RENDERED_TYPES[number];

/** VOI LUT functions (PS3.3 C.11.2.1.3). */
export type VoiFunction = "linear" | "linear-exact" | "sigmoid";

/** A window (VOI) to apply to grayscale values. */
export interface VoiWindow {
  center: number;
  width: number;
  fn: VoiFunction;
}

/** What a rendered or thumbnail request asks for. */
export interface RenderParams {
  type: RenderedType;
  /** JPEG quality, 1-100. */
  quality: number;
  window?: VoiWindow;
  /** The box the image is scaled to fit (`shrinkOnly`: never enlarged, a thumbnail's box). */
  viewport?: { width: number; height: number; shrinkOnly?: boolean };
}

/** The thumbnail box when the request names none. */
export const THUMBNAIL_SIZE = 200;
/**
 * Largest viewport side accepted: an enlarged image costs memory and time in its output pixels
 * (4096 x 4096 RGBA for the JPEG encoder is 64 MiB), whatever the size of the stored frame.
 */
const MAX_VIEWPORT = 4096;
const DEFAULT_QUALITY = 90;

function bad(message: string): GatewayError {
  return new GatewayError(400, "invalid_dicom_request", message);
}

function numbers(name: string, text: string): number[] {
  const parts = text.split(",").map((p) => p.trim());
  const out = parts.map(Number);
  if (parts.some((p) => p === "") || out.some((n) => !Number.isFinite(n))) {
    throw bad(`${name}=${text}: expected comma-separated numbers`);
  }
  return out;
}

function windowOf(text: string): VoiWindow {
  const [c, w, fn, ...rest] = text.split(",").map((p) => p.trim());
  const [center, width] = numbers("window", `${c ?? ""},${w ?? ""}`);
  const fnName = (fn || "linear").toLowerCase();
  if (rest.length || !["linear", "linear-exact", "sigmoid"].includes(fnName)) {
    throw bad(`window=${text}: expected center,width[,linear|linear-exact|sigmoid]`);
  }
  if (width <= 0 || (fnName === "linear" && width < 1)) {
    throw bad(`window=${text}: the width must be positive (at least 1 for linear)`);
  }
  return { center, width, fn: fnName as VoiFunction };
}

function viewportOf(text: string): { width: number; height: number } {
  const values = numbers("viewport", text);
  if (values.length === 6) {
    throw bad(`viewport=${text}: cropping (sx,sy,sw,sh) is not supported; give width,height`);
  }
  const [width, height] = values;
  if (
    values.length !== 2 || ![width, height].every((n) => Number.isInteger(n) && n > 0) ||
    width > MAX_VIEWPORT || height > MAX_VIEWPORT
  ) {
    throw bad(`viewport=${text}: expected width,height in pixels (1-${MAX_VIEWPORT})`);
  }
  return { width, height };
}

/** The media type to answer: the first acceptable in the client's order of preference. */
function typeOf(accept: string | null): RenderedType {
  if (accept === null || accept.trim() === "") return "image/jpeg";
  const ranges = accept.split(",").map((r, i) => {
    const mt = parseMediaType(r.trim());
    const q = Number(mt?.params.q ?? "1");
    return { type: mt?.type ?? "", q: Number.isFinite(q) ? q : 0, i };
  }).filter((r) => r.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranges) {
    if (r.type === "*/*" || r.type === "*" || r.type === "image/*") return "image/jpeg";
    const found = RENDERED_TYPES.find((t) => t === r.type);
    if (found) return found;
  }
  throw new GatewayError(
    406,
    "not_acceptable",
    `Accept \`${accept}\` allows no rendered media type: this gateway renders ${
      RENDERED_TYPES.join(" and ")
    }`,
  );
}

/**
 * The parameters of a rendered (`thumbnail` false) or thumbnail request, from its query string and
 * Accept header; 400 or 406 as the module comment says.
 */
export function renderParamsOf(
  query: URLSearchParams,
  acceptHeader: string | null,
  thumbnail: boolean,
): RenderParams {
  const type = typeOf(query.get("accept") ?? acceptHeader);
  let quality = DEFAULT_QUALITY;
  const q = query.get("quality");
  if (q !== null) {
    quality = Number(q);
    if (!Number.isInteger(quality) || quality < 1 || quality > 100) {
      throw bad(`quality=${q}: expected an integer from 1 to 100`);
    }
  }
  const params: RenderParams = { type, quality };
  const window = query.get("window");
  if (window !== null) params.window = windowOf(window);
  const viewport = query.get("viewport");
  if (viewport !== null) params.viewport = viewportOf(viewport);
  else if (thumbnail) {
    params.viewport = { width: THUMBNAIL_SIZE, height: THUMBNAIL_SIZE, shrinkOnly: true };
  }
  return params;
}

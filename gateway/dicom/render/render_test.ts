/** Rendering parameters, the raster pipeline (VOI, photometric, scaling) and the encoders. */
import jpeg from "jpeg-js";
import { decode as decodePng } from "fast-png";
import { assert, assertEquals, assertRejects, assertThrows } from "../../../tests/assert.ts";
import { GatewayError } from "../../errors.ts";
import {
  type ImageAttributes,
  renderInWorker,
  type RenderJob,
  renderParamsOf,
  stopRenderWorkers,
} from "./mod.ts";
// What runs in the rendering worker only (not part of the module's face).
import { encodeRaster } from "./encode.ts";
import { fitTo, renderRaster } from "./image.ts";
import { runJob } from "./worker.ts";

const NATIVE = "1.2.840.10008.1.2.1";

function attrs(over: Partial<ImageAttributes> = {}): ImageAttributes {
  return {
    rows: 2,
    columns: 2,
    samplesPerPixel: 1,
    bitsAllocated: 16,
    bitsStored: 16,
    highBit: 15,
    pixelRepresentation: 0,
    photometric: "MONOCHROME2",
    planarConfiguration: 0,
    rescaleSlope: 1,
    rescaleIntercept: 0,
    ...over,
  };
}

function words(...values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setUint16(i * 2, v & 0xffff, true));
  return out;
}

function job(frame: Uint8Array, image: ImageAttributes, query = ""): RenderJob {
  return {
    frame,
    transferSyntax: NATIVE,
    encapsulated: false,
    image,
    params: renderParamsOf(new URLSearchParams(query), "image/png", false),
  };
}

function errorOf(fn: () => unknown): GatewayError {
  const err = assertThrows(fn);
  assert(err instanceof GatewayError, String(err));
  return err;
}

Deno.test("renderParamsOf: media type, quality, window, viewport; 400 and 406 with reasons", () => {
  const q = (s: string) => new URLSearchParams(s);
  assertEquals(renderParamsOf(q(""), null, false), { type: "image/jpeg", quality: 90 });
  assertEquals(renderParamsOf(q(""), "image/gif;q=0.9, image/png;q=0.8", false).type, "image/png");
  assertEquals(renderParamsOf(q("accept=image/png"), "image/jpeg", false).type, "image/png");
  assertEquals(renderParamsOf(q(""), "*/*", false).type, "image/jpeg");
  assertEquals(renderParamsOf(q("window=40,400,SIGMOID&quality=75"), null, false), {
    type: "image/jpeg",
    quality: 75,
    window: { center: 40, width: 400, fn: "sigmoid" },
  });
  assertEquals(renderParamsOf(q(""), null, true).viewport, {
    width: 200,
    height: 200,
    shrinkOnly: true,
  });
  assertEquals(renderParamsOf(q("viewport=64,32"), null, true).viewport, { width: 64, height: 32 });
  assertEquals(errorOf(() => renderParamsOf(q(""), "image/gif", false)).status, 406);
  const bads = [
    "quality=0",
    "quality=x",
    "window=40",
    "window=1,0",
    "viewport=0,5",
    "viewport=4097,8",
  ];
  for (const bad of bads) {
    assertEquals(errorOf(() => renderParamsOf(q(bad), null, false)).status, 400, bad);
  }
  const crop = errorOf(() => renderParamsOf(q("viewport=10,10,0,0,5,5"), null, false));
  assert(crop.message.includes("cropping"), crop.message);
});

Deno.test("renderRaster: rescale, the request's or the dataset's window, MONOCHROME1, signed", () => {
  // Raw 0, 1000, 2000, 3000 with intercept -1000: -1000, 0, 1000, 2000 HU.
  const frame = words(0, 1000, 2000, 3000);
  const image = attrs({
    rescaleIntercept: -1000,
    window: { center: 0, width: 2000, fn: "linear" },
  });
  assertEquals([...renderRaster(job(frame, image)).data], [0, 128, 255, 255]);
  assertEquals(
    [...renderRaster(job(frame, image, "window=1000,2000,linear-exact")).data],
    [0, 0, 128, 255],
  );
  assertEquals(
    [...renderRaster(job(frame, { ...image, photometric: "MONOCHROME1" })).data],
    [255, 127, 0, 0],
  );
  // No window anywhere: the frame's range.
  assertEquals([...renderRaster(job(frame, attrs())).data], [0, 85, 170, 255]);
  // 12 bits stored, signed: 0xFFF is -1.
  const signed = attrs({ bitsStored: 12, highBit: 11, pixelRepresentation: 1 });
  assertEquals([...renderRaster(job(words(0xfff, 0, 1, 0x7ff), signed)).data], [0, 0, 0, 255]);
});

Deno.test("renderRaster: RGB planar configurations, YBR_FULL, and what cannot be rendered", () => {
  const rgb = attrs({
    rows: 1,
    columns: 2,
    samplesPerPixel: 3,
    bitsAllocated: 8,
    bitsStored: 8,
    highBit: 7,
  });
  rgb.photometric = "RGB";
  const interleaved = new Uint8Array([10, 20, 30, 40, 50, 60]);
  assertEquals([...renderRaster(job(interleaved, rgb)).data], [...interleaved]);
  const planar = new Uint8Array([10, 40, 20, 50, 30, 60]);
  assertEquals(
    [...renderRaster(job(planar, { ...rgb, planarConfiguration: 1 })).data],
    [...interleaved],
  );
  const ybr = renderRaster(job(new Uint8Array([128, 128, 128, 255, 128, 128]), {
    ...rgb,
    photometric: "YBR_FULL",
  }));
  assertEquals([...ybr.data], [128, 128, 128, 255, 255, 255]);
  const palette = assertThrows(() =>
    renderRaster(job(new Uint8Array(4), attrs({ bitsAllocated: 8, photometric: "PALETTE COLOR" })))
  );
  assertEquals((palette as { status?: number }).status, 406);
  const jls = { ...job(new Uint8Array(8), attrs()), encapsulated: true };
  jls.transferSyntax = "1.2.840.10008.1.2.4.80";
  assertEquals((assertThrows(() => renderRaster(jls)) as { status?: number }).status, 406);
});

Deno.test("fitTo: keeps the aspect ratio, averages when shrinking, a thumbnail box never enlarges", () => {
  const r = {
    width: 4,
    height: 2,
    channels: 1 as const,
    data: new Uint8Array([0, 100, 200, 0, 100, 0, 0, 200]),
  };
  assertEquals(fitTo(r, { width: 2, height: 2 }), {
    width: 2,
    height: 1,
    channels: 1,
    data: new Uint8Array([50, 100]),
  });
  assertEquals(fitTo(r, { width: 8, height: 8 }).width, 8);
  assertEquals(fitTo(r, { width: 8, height: 8, shrinkOnly: true }), r);
});

Deno.test("encodeRaster: PNG round-trips exactly, JPEG decodes to the same size", () => {
  const gray = {
    width: 3,
    height: 2,
    channels: 1 as const,
    data: new Uint8Array([0, 50, 100, 150, 200, 250]),
  };
  const png = decodePng(encodeRaster(gray, "image/png", 90));
  assertEquals([png.width, png.height, png.channels], [3, 2, 1]);
  assertEquals([...png.data], [...gray.data]);
  const decoded = jpeg.decode(encodeRaster(gray, "image/jpeg", 95), { useTArray: true });
  assertEquals([decoded.width, decoded.height], [3, 2]);
  assert(Math.abs(decoded.data[4 * 5] - 250) <= 8, String(decoded.data[4 * 5]));
});

Deno.test("renderInWorker: the worker's answer matches runJob; errors keep their status", async () => {
  try {
    const j = job(words(0, 1000, 2000, 3000), attrs());
    assertEquals(await renderInWorker(structuredClone(j)), runJob(j));
    const err = await assertRejects(() =>
      renderInWorker(job(new Uint8Array(4), attrs({ bitsAllocated: 32 })))
    );
    assert(err instanceof GatewayError);
    assertEquals([err.status, err.code], [406, "not_acceptable"]);
  } finally {
    stopRenderWorkers();
  }
});

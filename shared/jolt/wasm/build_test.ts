/** The committed WebAssembly module is what its C source builds to (needs clang and lld). */

import { strictEqual } from "node:assert";
import { requirePeer } from "../../../tests/support/peers.ts";
import { buildModuleText, MODULE_PATH } from "./build.ts";

const ignore = !(requirePeer("the scanner build", "clang", "clang") &&
  requirePeer("the scanner build", "wasm-ld", "lld"));

Deno.test({
  name: "wasm scan: scan_module.ts is what scan.c builds to (rebuild: deno task build:wasm)",
  ignore,
  fn: async () => {
    strictEqual(await buildModuleText(), await Deno.readTextFile(MODULE_PATH));
  },
});

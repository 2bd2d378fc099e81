import assert from "node:assert/strict";
import { closest, didYouMean, editDistance } from "./suggest.ts";

Deno.test("editDistance: insertions, deletions, substitutions and transpositions", () => {
  assert.equal(editDistance("", ""), 0);
  assert.equal(editDistance("port", "port"), 0);
  assert.equal(editDistance("prot", "port"), 1);
  assert.equal(editDistance("tiemout_secs", "timeout_secs"), 1);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("", "abc"), 3);
});

Deno.test("closest: picks the nearest candidate within the typo limit", () => {
  assert.equal(closest("networks", ["network", "endpoints"]), "network");
  assert.equal(closest("PORT", ["port", "bind"]), "port");
  assert.equal(closest("zzz", ["port", "bind"]), undefined);
  assert.equal(closest("ab", ["xy"]), undefined);
});

Deno.test("didYouMean: a hint or nothing", () => {
  assert.equal(didYouMean("pipeline", ["pipelines", "proxy"]), "; did you mean `pipelines`?");
  assert.equal(didYouMean("colour", ["size"]), "");
});

import { equal } from "node:assert/strict";
import { quantile, runLoad } from "./load.ts";

Deno.test("bench http3: quantiles and a closed-loop run", async () => {
  equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.99), 10);
  equal(quantile([1, 2, 3, 4], 0.5), 2);
  let n = 0;
  const r = await runLoad(3, 0.1, async () => {
    // Each call's own number: `n` moves on while this call waits (three run at once).
    const mine = ++n;
    await new Promise((res) => setTimeout(res, 5));
    if (mine % 5 === 0) throw new Error("counted as an error");
  });
  equal(r.requests + r.errors, n);
  equal(r.errors, Math.floor(n / 5));
});

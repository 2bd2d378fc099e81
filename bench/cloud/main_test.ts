/** The helpers of the cloud benchmark. */
import { assert, assertEquals } from "../../tests/assert.ts";
import { quantile, table } from "./main.ts";

Deno.test("cloud bench: quantiles and the report table", () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
  assertEquals([quantile(sorted, 0.5), quantile(sorted, 0.99), quantile(sorted, 1)], [50, 99, 100]);
  assertEquals(quantile([7], 0.99), 7);
  assert(Number.isNaN(quantile([], 0.5)));
  const base = { name: "base", requests: 1000, errors: 0, seconds: 1, p50: 1, p99: 2 };
  const slow = { name: "slow", requests: 250, errors: 3, seconds: 1, p50: 4, p99: 9.5 };
  assertEquals(
    table([base, slow], base).split("\n").slice(2),
    [
      "| base | 1000 | 1000 | 1.00 | 2.00 | 0 | 1.000 |",
      "| slow | 250 | 250 | 4.00 | 9.50 | 3 | 0.250 |",
    ],
  );
});

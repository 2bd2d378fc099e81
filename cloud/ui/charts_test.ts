/** The axis of a chart ends on a round number: 1 when there is nothing above zero (not 0.91). */
import { assertEquals } from "../../tests/assert.ts";
import { axisMax } from "./charts.tsx";

Deno.test("charts: the axis maximum is 1, 2, 2.5 or 5 times a power of ten, 1 when empty", () => {
  const cases: [number, number][] = [
    [0, 1],
    [-3, 1],
    [Number.NaN, 1],
    [0.0042, 0.005],
    [0.3, 0.5],
    [0.91, 1],
    [1, 1],
    [1.1, 2],
    [2.4, 2.5],
    [3, 5],
    [10, 10],
    [12, 20],
    [101, 200],
    [1234, 2000],
  ];
  assertEquals(cases.map(([v]) => axisMax(v)), cases.map(([, top]) => top));
});

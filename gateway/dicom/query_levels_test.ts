/** QIDO-RS searches split by level (query_levels.ts) and their default return keys (query.ts). */
import { assert, assertEquals } from "../../tests/assert.ts";
import type { DicomJson } from "./json.ts";
import { buildQuery, DEFAULT_RETURN_KEYS, defaultReturnKeys } from "./query.ts";
import { inheritFrom, splitHierarchical } from "./query_levels.ts";

const STUDY = "1.2.3";
const SERIES = "1.2.3.4";

Deno.test("default return keys add the levels above that the path leaves open", () => {
  assertEquals(defaultReturnKeys("STUDY"), DEFAULT_RETURN_KEYS.STUDY);
  assertEquals(defaultReturnKeys("SERIES", { study: STUDY }), DEFAULT_RETURN_KEYS.SERIES);
  const allSeries = defaultReturnKeys("SERIES");
  assert(allSeries.includes("PatientID") && allSeries.includes("Modality"));
  const ofStudy = defaultReturnKeys("IMAGE", { study: STUDY });
  assert(ofStudy.includes("Modality") && !ofStudy.includes("PatientID"));
  const ofSeries = defaultReturnKeys("IMAGE", { study: STUDY, series: SERIES });
  assertEquals(ofSeries, DEFAULT_RETURN_KEYS.IMAGE);
  const all = defaultReturnKeys("IMAGE");
  assert(all.includes("PatientID") && all.includes("Modality") && all.includes("SOPInstanceUID"));
  assertEquals(new Set(all).size, all.length);
});

Deno.test("a search with only path UIDs above its level is one C-FIND", () => {
  const q = (path: Record<string, string>, params = "") =>
    buildQuery("IMAGE", new URLSearchParams(params), path);
  assertEquals(splitHierarchical(q({ study: STUDY, series: SERIES })), undefined);
  assertEquals(splitHierarchical(q({ study: STUDY })), undefined);
  assertEquals(splitHierarchical(q({})), undefined);
  assertEquals(splitHierarchical(q({}, `StudyInstanceUID=${STUDY}&InstanceNumber=1`)), undefined);
  // QIDO-RS searches are marked for splitting (the backend passes DIMSE identifiers as they are).
  assertEquals(q({}).hierarchical, true);
});

Deno.test("study keys of an instance search: studies first, then instances below each", () => {
  const query = buildQuery("IMAGE", new URLSearchParams("PatientID=P1&limit=5&InstanceNumber=2"));
  const split = splitHierarchical(query)!;
  assertEquals(split.parents.level, "STUDY");
  const p = split.parents.identifier;
  assertEquals(p["00080052"].Value, ["STUDY"]);
  assertEquals(p["00100020"].Value, ["P1"]);
  assertEquals(p["0020000D"], { vr: "UI" });
  // Series and instance keys stay below.
  assertEquals([p["00080060"], p["00200013"], p["00080018"]], [undefined, undefined, undefined]);
  const below = split.below({ "0020000D": { vr: "UI", Value: [STUDY] } });
  assertEquals(below.level, "IMAGE");
  assertEquals([below.offset, below.limit], [0, undefined]);
  assertEquals(below.identifier["0020000D"].Value, [STUDY]);
  assertEquals(below.identifier["00100020"], { vr: "LO" });
  assertEquals(below.identifier["00200013"].Value, [2]);
  assertEquals(splitHierarchical(below), undefined);
});

Deno.test("series keys split at the series level; study keys first when both are there", () => {
  const ofStudy = buildQuery("IMAGE", new URLSearchParams("Modality=CT"), { study: STUDY });
  const split = splitHierarchical(ofStudy)!;
  assertEquals(split.parents.level, "SERIES");
  assertEquals(split.parents.identifier["0020000D"].Value, [STUDY]);
  assertEquals(split.parents.identifier["00080060"].Value, ["CT"]);
  const below = split.below({
    "0020000D": { vr: "UI", Value: [STUDY] },
    "0020000E": { vr: "UI", Value: [SERIES] },
  });
  assertEquals(below.identifier["0020000E"].Value, [SERIES]);
  assertEquals(below.identifier["00080060"], { vr: "CS" });

  const both = buildQuery("IMAGE", new URLSearchParams("PatientID=P1&Modality=CT"));
  const first = splitHierarchical(both)!;
  assertEquals(first.parents.level, "STUDY");
  const next = splitHierarchical(first.below({ "0020000D": { vr: "UI", Value: [STUDY] } }))!;
  assertEquals(next.parents.level, "SERIES");
  assertEquals(next.parents.identifier["00080060"].Value, ["CT"]);
  // A UID list above the level is matched there too (a hierarchical search takes one UID).
  const list = buildQuery("SERIES", new URLSearchParams(`StudyInstanceUID=${STUDY},1.2.9`));
  assertEquals(splitHierarchical(list)!.parents.identifier["0020000D"].Value, [STUDY, "1.2.9"]);
});

Deno.test("a match below a parent gets the parent's attributes it lacks", () => {
  const parent: DicomJson = {
    "0020000D": { vr: "UI", Value: [STUDY] },
    "00100020": { vr: "LO", Value: ["P1"] },
    "00100010": { vr: "PN", Value: [{ Alphabetic: "DOE^J" }] },
    "00080052": { vr: "CS", Value: ["STUDY"] },
  };
  const match: DicomJson = {
    "00080018": { vr: "UI", Value: ["1.2.3.4.5"] },
    "00100020": { vr: "LO" },
    "00100010": { vr: "PN", Value: [{ Alphabetic: "OWN^NAME" }] },
  };
  const out = inheritFrom(match, parent);
  assertEquals(out["00100020"].Value, ["P1"]);
  assertEquals(out["00100010"].Value, [{ Alphabetic: "OWN^NAME" }]);
  assertEquals(out["0020000D"].Value, [STUDY]);
  assertEquals(out["00080052"], undefined);
});

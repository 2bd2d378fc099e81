/** The DICOM data dictionary (from dcmjs): keywords, tags and value representations. */
import dcmjs from "dcmjs";

interface DictEntry {
  tag: string;
  vr: string;
  name: string;
}

const META = dcmjs.data.DicomMetaDictionary;
const NAME_MAP = META.nameMap as Record<string, DictEntry>;
const DICTIONARY = META.dictionary as Record<string, DictEntry>;
const HEX_TAG = /^[0-9A-Fa-f]{8}$/;

/** `(0010,0010)` -> `00100010`. */
function plain(punctuated: string): string {
  return punctuated.replace(/[(),]/g, "").toUpperCase();
}

/** The 8-hex-digit tag of a keyword (`PatientID`) or tag (`00100020`); undefined when unknown. */
export function tagOf(keywordOrTag: string): string | undefined {
  if (HEX_TAG.test(keywordOrTag)) return keywordOrTag.toUpperCase();
  const entry = NAME_MAP[keywordOrTag];
  return entry ? plain(entry.tag) : undefined;
}

/** The keyword of a tag, when the dictionary knows it. */
export function keywordOf(tag: string): string | undefined {
  const t = tag.toUpperCase();
  return DICTIONARY[`(${t.slice(0, 4)},${t.slice(4)})`]?.name;
}

/** dcmjs's words for ambiguous VRs (`US or SS`, `OB or OW`) -> the usual choice. */
const AMBIGUOUS: Record<string, string> = { ox: "OW", xs: "US", lt: "OW", na: "UN" };

/** The value representation of a tag (ambiguous ones resolved as usual); `UN` if unknown. */
export function vrOf(tag: string): string {
  const t = tag.toUpperCase();
  const vr = DICTIONARY[`(${t.slice(0, 4)},${t.slice(4)})`]?.vr;
  if (!vr) return t.endsWith("0000") ? "UL" : "UN";
  return AMBIGUOUS[vr] ?? vr.slice(0, 2);
}

/**
 * HL7 v2 sample messages nobody here wrote: the test fixtures shipped inside two npm packages
 * (pinned in deno.json, read from node_modules as installed), across versions 2.3 to 2.5.1:
 *
 * - `hl7-standard` 1.0.4 (Apache-2.0): ADT^A01 v2.4 (CRLF), ACK v2.3.1, RSP^K11 v2.5.1 and an
 *   FHS/BHS batch file.
 * - `hl7` 1.1.1 (Apache-2.0): ORU^R01 v2.3 and v2.4, ADT^A04 v2.5.
 */
import { REPO_ROOT } from "./paths.ts";

/** One sample file. */
export interface Hl7Sample {
  /** `package@version/path` inside the package. */
  name: string;
  /** The file's text as shipped. */
  text: string;
}

/** The packages and the files of each that hold HL7 v2 messages. */
export const HL7_SAMPLE_PACKAGES: ReadonlyArray<{ pkg: string; version: string; files: string[] }> =
  [
    {
      pkg: "hl7-standard",
      version: "1.0.4",
      files: [
        "tests/data/message.hl7",
        "tests/data/message2.hl7",
        "tests/data/message3.hl7",
        "tests/data/batch.hl7",
      ],
    },
    {
      pkg: "hl7",
      version: "1.1.1",
      files: [
        "test/fixtures/sample.txt",
        "test/fixtures/sample2.txt",
        "test/fixtures/sample3.txt",
        "test/fixtures/sample4.txt",
        "test/fixtures/isabella_jones_lipid_panel.txt",
        "test/fixtures/isabella_jones_multiple_tests.txt",
      ],
    },
  ];

/**
 * Shipped samples that are not valid ER7, and the Hl7Error code each is refused with: a space for
 * the escape character in MSH-2 (`^~ &`), and an OBR cut in two by a line break.
 */
export const HL7_REFUSED_SAMPLES: ReadonlyArray<
  { pkg: string; version: string; file: string; code: string }
> = [
  {
    pkg: "hl7-standard",
    version: "1.0.4",
    file: "examples/data/input.hl7",
    code: "bad_delimiters",
  },
  { pkg: "hl7", version: "1.1.1", file: "test/fixtures/sample5.txt", code: "bad_segment" },
];

/** The text of a file of an installed sample package. */
export function sampleFile(pkg: string, version: string, file: string): Promise<string> {
  return Deno.readTextFile(
    `${REPO_ROOT}/node_modules/.deno/${pkg}@${version}/node_modules/${pkg}/${file}`,
  );
}

/** Every sample file, read from the installed packages (node_modules/.deno/<pkg>@<version>). */
export async function hl7Samples(): Promise<Hl7Sample[]> {
  const out: Hl7Sample[] = [];
  for (const { pkg, version, files } of HL7_SAMPLE_PACKAGES) {
    const dir = `${REPO_ROOT}/node_modules/.deno/${pkg}@${version}/node_modules/${pkg}`;
    for (const file of files) {
      out.push({
        name: `${pkg}@${version}/${file}`,
        text: await Deno.readTextFile(`${dir}/${file}`),
      });
    }
  }
  return out;
}

/** One sample's text with its segments ended by CR only and no blank lines, as HL7 sends them. */
export function withCr(text: string): string {
  return text.replace(/\r\n|\n/g, "\r").replace(/\r{2,}/g, "\r");
}

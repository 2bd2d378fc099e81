import { deepEqual, equal, ok } from "node:assert/strict";
import { decodeBody, encodeData } from "./mod.ts";
import { encodeCsv, escapeCsvCell } from "./csv.ts";
import { CsvLimitScanner } from "./csv_limits.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";
import { cpuGrowthAsync } from "../../tests/support/cpu_scaling.ts";
import { stallUnder } from "../../tests/support/stall_bound.ts";

Deno.test("csv: rows become objects keyed by the header, values stay strings", async () => {
  deepEqual(
    await decodeBody(
      utf8("id,name,dob\n00123,Doe,1970-01-01\n00124,Roe,1980-02-02\n"),
      "text/csv",
      limits(),
    ),
    [
      { id: "00123", name: "Doe", dob: "1970-01-01" },
      { id: "00124", name: "Roe", dob: "1980-02-02" },
    ],
  );
});

Deno.test("csv: CRLF, no trailing newline, quoted fields with commas, quotes and newlines", async () => {
  deepEqual(
    await decodeBody(
      utf8('a,b\r\n"x, y","say ""hi"""\r\n"multi\nline",""\r\nlast,row'),
      "text/csv; charset=utf-8",
      limits(),
    ),
    [
      { a: "x, y", b: 'say "hi"' },
      { a: "multi\nline", b: "" },
      { a: "last", b: "row" },
    ],
  );
});

Deno.test("csv: empty body, header only, blank lines and a BOM", async () => {
  deepEqual(await decodeBody(new Uint8Array(0), "text/csv", limits()), []);
  deepEqual(await decodeBody(utf8("a,b\n"), "text/csv", limits()), []);
  deepEqual(await decodeBody(utf8("a,b\n\n1,2\n\n\n3,4\n\n"), "text/csv", limits()), [
    { a: "1", b: "2" },
    { a: "3", b: "4" },
  ]);
  deepEqual(
    await decodeBody(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("id\n1\n")]), "text/csv", limits()),
    [
      { id: "1" },
    ],
  );
});

Deno.test("csv: ragged rows are 400 invalid_csv naming the line", async () => {
  await expectError(
    () => decodeBody(utf8("a,b\n1,2\n1,2,3\n"), "text/csv", limits()),
    400,
    "invalid_csv",
    "on line 3",
  );
  await expectError(
    () => decodeBody(utf8("a,b,c\n1,2\n"), "text/csv", limits()),
    400,
    "invalid_csv",
    "on line 2",
  );
});

Deno.test("csv: bad quoting and duplicate columns are 400 invalid_csv", async () => {
  await expectError(
    () => decodeBody(utf8('a,b\n"open,2\n'), "text/csv", limits()),
    400,
    "invalid_csv",
    "Quote Not Closed",
  );
  await expectError(
    () => decodeBody(utf8('a,b\n1,x"y"z\n'), "text/csv", limits()),
    400,
    "invalid_csv",
  );
  await expectError(
    () => decodeBody(utf8("id,name,id\n1,2,3\n"), "text/csv", limits()),
    400,
    "invalid_csv",
    'duplicate column name "id"',
  );
});

/** A CSV body with a header and `rows` data rows. */
function rowsCsv(rows: number): Uint8Array {
  let text = "n,v\n";
  for (let i = 0; i < rows; i++) text += `${i},x\n`;
  return utf8(text);
}

Deno.test("csv: exactly max_csv_rows data rows pass, one more is 413 too_many_csv_rows", async () => {
  const l = limits({ max_csv_rows: 3 });
  const rows = await decodeBody(rowsCsv(3), "text/csv", l) as Record<string, string>[];
  equal(rows.length, 3);
  deepEqual(rows[2], { n: "2", v: "x" });
  await expectError(
    () => decodeBody(rowsCsv(4), "text/csv", l),
    413,
    "too_many_csv_rows",
    "max_csv_rows of 3",
  );
  // The header row does not count; blank lines do not count.
  deepEqual(await decodeBody(utf8("n\n\n1\n\n2\n3\n\n"), "text/csv", l), [{ n: "1" }, { n: "2" }, {
    n: "3",
  }]);
  // The default limit.
  equal((await decodeBody(rowsCsv(10_000), "text/csv", limits()) as unknown[]).length, 10_000);
  await expectError(
    () => decodeBody(rowsCsv(10_001), "text/csv", limits()),
    413,
    "too_many_csv_rows",
  );
});

Deno.test("csv: formula injection is escaped with a leading quote in values and header", async () => {
  const body = 'name,"=HEADER()",note\n' +
    "=1+2,+cmd,-5\n" +
    '@SUM(A1),"\tTAB","\rCR"\n' +
    "safe,'quoted,a=b\n";
  deepEqual(await decodeBody(utf8(body), "text/csv", limits()), [
    { name: "'=1+2", "'=HEADER()": "'+cmd", note: "'-5" },
    { name: "'@SUM(A1)", "'=HEADER()": "'\tTAB", note: "'\rCR" },
    { name: "safe", "'=HEADER()": "'quoted", note: "a=b" },
  ]);
  equal(escapeCsvCell("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
  equal(escapeCsvCell("+1"), "'+1");
  equal(escapeCsvCell("-1"), "'-1");
  equal(escapeCsvCell("@x"), "'@x");
  equal(escapeCsvCell("\tx"), "'\tx");
  equal(escapeCsvCell("\rx"), "'\rx");
  equal(escapeCsvCell(""), "");
  equal(escapeCsvCell("a=1"), "a=1");
  equal(escapeCsvCell("é"), "é");
  // Leading spaces do not hide a formula from a spreadsheet; nor does a line feed.
  equal(escapeCsvCell(" =1+1"), "' =1+1");
  equal(escapeCsvCell("  @SUM(A1)"), "'  @SUM(A1)");
  equal(escapeCsvCell("\u00a0+1"), "'\u00a0+1");
  equal(escapeCsvCell("\nx"), "'\nx");
  equal(escapeCsvCell(" a"), " a");
  equal(escapeCsvCell("   "), "   ");
  deepEqual(await decodeBody(utf8('a\n" =1+1"\n'), "text/csv", limits()), [{ a: "' =1+1" }]);
  equal(encodeCsv([{ a: " -2+3" }]), "a\r\n' -2+3\r\n");
});

Deno.test("csv: charset parameter and unknown charset", async () => {
  const latin = new Uint8Array([...utf8("name\nRen"), 0xe9, 0x0a]);
  deepEqual(await decodeBody(latin, "text/csv; charset=iso-8859-1", limits()), [{ name: "René" }]);
  await expectError(
    () => decodeBody(utf8("a\n1\n"), "text/csv; charset=nope", limits()),
    415,
    "unsupported_charset",
  );
});

Deno.test("csv: a __proto__ column is an own property, not the prototype", async () => {
  const rows = await decodeBody(utf8("__proto__,b\nx,y\n"), "text/csv", limits()) as Record<
    string,
    string
  >[];
  equal(Object.getPrototypeOf(rows[0]), Object.prototype);
  deepEqual(Object.keys(rows[0]), ["__proto__", "b"]);
  equal(Object.getOwnPropertyDescriptor(rows[0], "__proto__")?.value, "x");
});

Deno.test("encodeData: CSV round trip keeps the content type and the data", async () => {
  const body = 'id,name,note\r\n00123,"Doe, John","said ""hi"""\r\n00124,Roe,"two\nlines"\r\n';
  const data = await decodeBody(utf8(body), "text/csv", limits());
  const out = encodeData(data, "text/csv; header=present");
  equal(out.contentType, "text/csv; header=present");
  equal(new TextDecoder().decode(out.bytes), body);
  deepEqual(await decodeBody(out.bytes, out.contentType, limits()), data);
});

Deno.test("encodeData: CSV header is the union of keys; cells are quoted per RFC 4180", () => {
  const out = encodeData(
    [{ a: 1, b: "x" }, { c: true, a: null }, { b: 'q"uote', d: "line\nbreak", e: "cr\rhere" }],
    "text/csv",
  );
  equal(
    new TextDecoder().decode(out.bytes),
    'a,b,c,d,e\r\n1,x,,,\r\n,,true,,\r\n,"q""uote",,"line\nbreak","cr\rhere"\r\n',
  );
  equal(out.contentType, "text/csv");
  // Encoding writes values as they are: escaped cells stay escaped, nothing new is added.
  // Escaped once on the way in, never again; a string that starts like a formula is escaped on
  // the way out too, a number is not.
  equal(encodeCsv([{ f: "'=1+2", g: "-5", h: -5 }]), "f,g,h\r\n'=1+2,'-5,-5\r\n");
  equal(encodeCsv([]), "");
  equal(encodeCsv([{}]), "");
  // Inherited names are not read from rows that lack them.
  equal(encodeCsv([{ toString: "x" }, { a: "1" }]), "toString,a\r\nx,\r\n,1\r\n");
});

Deno.test("encodeData: CSV data that is not an array of flat objects falls back to JSON", () => {
  for (
    const data of [
      { a: 1 },
      "a,b",
      [1, 2],
      [["a", "b"]],
      [{ a: { nested: 1 } }],
      [{ a: [1] }],
      [null],
    ]
  ) {
    equal(encodeCsv(data), null, JSON.stringify(data));
    const out = encodeData(data, "text/csv");
    equal(out.contentType, "application/json");
    deepEqual(JSON.parse(new TextDecoder().decode(out.bytes)), data);
  }
  // CSV data is UTF-8 on the way out.
  const latin = encodeData([{ n: "é" }], "text/csv; charset=latin1");
  equal(latin.contentType, "text/csv; charset=utf-8");
  equal(new TextDecoder().decode(latin.bytes), "n\r\né\r\n");
});

Deno.test("csv: a limit of 0 rows and an unbounded limit", async () => {
  deepEqual(await decodeBody(utf8("a\n"), "text/csv", limits({ max_csv_rows: 0 })), []);
  await expectError(
    () => decodeBody(utf8("a\n1\n"), "text/csv", limits({ max_csv_rows: 0 })),
    413,
    "too_many_csv_rows",
  );
  equal(
    (await decodeBody(rowsCsv(5), "text/csv", limits({ max_csv_rows: Infinity })) as unknown[])
      .length,
    5,
  );
});

Deno.test("csv: exactly max_csv_columns fields pass, one more is 413 too_many_csv_columns", async () => {
  const l = limits({ max_csv_columns: 3 });
  deepEqual(await decodeBody(utf8("a,b,c\n1,2,3\n"), "text/csv", l), [{ a: "1", b: "2", c: "3" }]);
  await expectError(
    () => decodeBody(utf8("a,b,c,d\n1,2,3,4\n"), "text/csv", l),
    413,
    "too_many_csv_columns",
    "CSV row on line 1 has more than max_csv_columns of 3 fields",
  );
  // Any row counts, not only the header (a longer row is refused before the parser sees it).
  await expectError(
    () => decodeBody(utf8("a,b\n1,2\n1,2,3,4\n"), "text/csv", l),
    413,
    "too_many_csv_columns",
    "on line 3",
  );
  // Commas and line breaks inside quotes are data; "" is a quote.
  deepEqual(await decodeBody(utf8('a,b,c\n"1,2,3",",\n,","x""y,z"\n'), "text/csv", l), [
    { a: "1,2,3", b: ",\n,", c: 'x"y,z' },
  ]);
  // The default limit.
  const header = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(",") + "\n";
  equal(
    (await decodeBody(
      utf8(header(1_000) + "x,".repeat(999) + "x\n"),
      "text/csv",
      limits(),
    ) as object[]).length,
    1,
  );
  await expectError(
    () => decodeBody(utf8(header(1_001)), "text/csv", limits()),
    413,
    "too_many_csv_columns",
  );
});

Deno.test("csv: a cell of max_csv_cell_bytes passes, one byte more is 413 csv_cell_too_large", async () => {
  const l = limits({ max_csv_cell_bytes: 5 });
  deepEqual(await decodeBody(utf8("a,b\nabcde,x\n"), "text/csv", l), [{ a: "abcde", b: "x" }]);
  await expectError(
    () => decodeBody(utf8("a,b\nx,abcdef\n"), "text/csv", l),
    413,
    "csv_cell_too_large",
    "CSV cell on line 2 is larger than max_csv_cell_bytes of 5 bytes",
  );
  // Bytes as sent: the quotes count, and "" is two bytes; UTF-8 bytes, not characters.
  deepEqual(await decodeBody(utf8('a\n"a"""\n'), "text/csv", l), [{ a: 'a"' }]);
  await expectError(
    () => decodeBody(utf8('a\n"abcd"\n'), "text/csv", l),
    413,
    "csv_cell_too_large",
  );
  deepEqual(await decodeBody(utf8("a\néé\n"), "text/csv", l), [{ a: "éé" }]);
  await expectError(() => decodeBody(utf8("a\nééé\n"), "text/csv", l), 413, "csv_cell_too_large");
  // A header cell counts too; a line break ends a cell.
  await expectError(
    () => decodeBody(utf8("abcdef\n1\n"), "text/csv", l),
    413,
    "csv_cell_too_large",
  );
  deepEqual(await decodeBody(utf8("abcde\r\nabcde\rabcde"), "text/csv", l), [
    { abcde: "abcde" },
    { abcde: "abcde" },
  ]);
});

Deno.test("CsvLimitScanner: the same verdict however the bytes are cut into chunks", () => {
  const body = utf8('id,"quoted ""x"", y",z\r\n1,"a\nb",""""\n2,,"x,y"\n');
  for (let chunk = 1; chunk <= body.length; chunk++) {
    const ok = new CsvLimitScanner(body, 3, 17);
    for (let at = chunk; at < body.length + chunk; at += chunk) {
      ok.scanTo(Math.min(at, body.length));
    }
    // 17 bytes is the longest cell ("quoted ""x"", y" with its quotes): 16 must fail somewhere.
    let failed = "";
    const tight = new CsvLimitScanner(body, 3, 16);
    try {
      for (let at = chunk; at < body.length + chunk; at += chunk) {
        tight.scanTo(Math.min(at, body.length));
      }
    } catch (e) {
      failed = (e as { code: string }).code;
    }
    equal(failed, "csv_cell_too_large", `chunks of ${chunk}`);
  }
});

Deno.test("csv: CR, LF and CRLF all end rows, also mixed in one body", async () => {
  deepEqual(await decodeBody(utf8("a,b\r1,2\n3,4\r\n5,6"), "text/csv", limits()), [
    { a: "1", b: "2" },
    { a: "3", b: "4" },
    { a: "5", b: "6" },
  ]);
});

/** A CSV body: a header of `columns` names, then `rows` rows of short values. */
function tableCsv(columns: number, rows: number, value = "v"): Uint8Array {
  const header = Array.from({ length: columns }, (_, i) => `c${i}`).join(",");
  const row = Array.from({ length: columns }, () => value).join(",");
  return utf8(header + "\n" + (row + "\n").repeat(rows));
}

Deno.test("csv: 1,000,000 columns, a 9 MB cell and 1,000,000 rows are refused without holding the event loop", async () => {
  const cases: [string, Uint8Array, string][] = [
    // 7.9 MB: a header of 1M columns took 4 to 12 s (csv-parse discovers the row delimiter with
    // three new Buffers per byte of the first row).
    ["1,000,000 columns", tableCsv(1_000_000, 0), "too_many_csv_columns"],
    ["a 9 MB cell", utf8("a\n" + "x".repeat(9_000_000) + "\n"), "csv_cell_too_large"],
    ["a 9 MB quoted cell", utf8('a\n"' + "x".repeat(9_000_000) + '"\n'), "csv_cell_too_large"],
    ["1,000,000 rows", utf8("a\n" + "1\n".repeat(1_000_000)), "too_many_csv_rows"],
  ];
  for (const [name, body, code] of cases) {
    // Up to three runs (the first under 100 ms settles it), each refused with the code.
    const r = await stallUnder(
      () => decodeBody(body, "text/csv", limits()),
      100,
      (run) => equal((run.error as { code?: string })?.code, code, name),
    );
    ok(r.stallMs < 100, `${name}: the event loop was held ${r.stallMs.toFixed(0)} ms`);
  }
});

Deno.test("csv: large bodies within every limit never hold the event loop more than 100 ms", async () => {
  // 10,000 rows of 100 cells (9 MB) held the loop 0.5 s in one piece; 1,000 rows of 1,000
  // formula cells (3 MB) 0.8 s. Both are a million cells: more live rows make V8's young
  // generation collections (each copies the rows made since the last one, 20 to 50 ms apiece on
  // a busy machine) the longest pauses, which no slicing of the parse can shorten.
  for (
    const [name, body, rows] of [
      ["10,000 rows x 100 columns (9 MB)", tableCsv(100, 10_000, "value-12"), 10_000],
      ["1,000 rows x 1,000 columns (3 MB)", tableCsv(1_000, 1_000, "=1"), 1_000],
    ] as const
  ) {
    // Up to three runs (the first under 100 ms settles it), each decoding the whole body.
    const r = await stallUnder(() => decodeBody(body, "text/csv", limits()), 100, (run) => {
      equal(run.error, undefined, name);
      const data = run.value as Record<string, string>[];
      equal(data.length, rows, name);
      // The formula escape still applies to every cell.
      if (rows === 1_000) equal(data[999].c999, "'=1");
    });
    ok(r.stallMs < 100, `${name}: the event loop was held ${r.stallMs.toFixed(0)} ms`);
  }
});

Deno.test("csv: decoding time grows linearly in rows, columns and cell size", async () => {
  const wide = limits({ max_csv_columns: 1_000_000, max_csv_rows: 1_000_000 });
  const run = (body: Uint8Array) => () => decodeBody(body, "text/csv", wide);
  const cases: [string, Uint8Array, Uint8Array][] = [
    ["rows", tableCsv(4, 2_000), tableCsv(4, 20_000)],
    ["columns", tableCsv(10_000, 1), tableCsv(100_000, 1)],
    [
      "cell bytes",
      utf8("a\n" + "x".repeat(10_000) + "\n"),
      utf8("a\n" + "x".repeat(100_000) + "\n"),
    ],
  ];
  for (const [name, small, large] of cases) {
    // Timed in CPU time: a busy machine's wait for a core is not growth.
    const { ratio, linear } = await cpuGrowthAsync(run(small), run(large), 40);
    // Ten times the input: about ten times the time; quadratic work would take about 100 times.
    ok(linear, `${name}: ten times the input took ${ratio.toFixed(1)} times as long`);
  }
});

import { deepEqual, equal, ok as ok_ } from "node:assert/strict";
import { decodeBody, encodeData } from "./mod.ts";
import { decodeXmlEntities, encodeXml, scanXml, xmlCharset } from "./xml.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";
import { stallUnder } from "../../tests/support/stall_bound.ts";
import { cpuGrowth } from "../../tests/support/cpu_scaling.ts";

const XML_TYPES = [
  "application/xml",
  "text/xml",
  "application/soap+xml",
  "application/fhir+xml",
  "application/xml; charset=utf-8",
];

const PATIENT = `<?xml version="1.0" encoding="UTF-8"?>
<Patient xmlns="http://hl7.org/fhir" id="p1">
  <identifier system="urn:mrn">00123</identifier>
  <name use="official"><family>Doe</family><given>John</given><given>Q</given></name>
  <birthDate value="1970-01-01"/>
  <active>true</active>
  <empty></empty>
</Patient>`;

const PATIENT_DATA = {
  Patient: {
    "@xmlns": "http://hl7.org/fhir",
    "@id": "p1",
    identifier: { "@system": "urn:mrn", "#text": "00123" },
    name: { "@use": "official", family: "Doe", given: ["John", "Q"] },
    birthDate: { "@value": "1970-01-01" },
    active: "true",
    empty: "",
  },
};

Deno.test("xml: every XML content type converts to JSON with @attributes, #text, arrays", async () => {
  for (const ct of XML_TYPES) {
    deepEqual(await decodeBody(utf8(PATIENT), ct, limits()), PATIENT_DATA, ct);
  }
});

Deno.test("xml: values stay strings (leading zeros, numbers, booleans)", async () => {
  deepEqual(
    await decodeBody(
      utf8('<r n="007"><a>00123</a><b>1e5</b><c>0x1F</c><d>false</d></r>'),
      "text/xml",
      limits(),
    ),
    { r: { "@n": "007", a: "00123", b: "1e5", c: "0x1F", d: "false" } },
  );
});

Deno.test("xml: SOAP envelope with namespaces keeps prefixed names", async () => {
  const soap = `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope">
  <soap:Body><m:GetPatient xmlns:m="urn:x"><m:Id>42</m:Id></m:GetPatient></soap:Body>
</soap:Envelope>`;
  deepEqual(await decodeBody(utf8(soap), "application/soap+xml", limits()), {
    "soap:Envelope": {
      "@xmlns:soap": "http://www.w3.org/2003/05/soap-envelope",
      "soap:Body": { "m:GetPatient": { "@xmlns:m": "urn:x", "m:Id": "42" } },
    },
  });
});

Deno.test("xml: predefined entities and character references decode; CDATA is verbatim", async () => {
  deepEqual(
    await decodeBody(
      utf8(
        `<r a="x &amp; &quot;y&quot;"><t>1 &lt; 2 &gt; 0 &amp; &apos;q&apos; &#65;&#x42;&#x1F600;</t><c><![CDATA[a &amp; <b>]]></c></r>`,
      ),
      "application/xml",
      limits(),
    ),
    { r: { "@a": 'x & "y"', t: "1 < 2 > 0 & 'q' AB😀", c: "a &amp; <b>" } },
  );
  equal(decodeXmlEntities("no refs"), "no refs");
  // Names a DTD could declare are never expanded by our decoder.
  equal(decodeXmlEntities("&e; &xxe; &lol9;"), "&e; &xxe; &lol9;");
});

Deno.test("xml: comments, processing instructions and the declaration are dropped", async () => {
  deepEqual(
    await decodeBody(
      utf8(`<?xml version="1.0"?><!-- c --><?pi x?><r><!-- <!DOCTYPE in a comment --><a>1</a></r>`),
      "application/xml",
      limits(),
    ),
    { r: { a: "1" } },
  );
});

Deno.test("xml: empty body is null", async () => {
  equal(await decodeBody(new Uint8Array(0), "application/xml", limits()), null);
});

const XXE = `<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>
<x>&e;</x>`;

const BILLION_LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz>&lol9;</lolz>`;

Deno.test("xml: XXE payload is rejected with 400 xml_dtd_forbidden", async () => {
  for (const ct of XML_TYPES) {
    await expectError(
      () => decodeBody(utf8(XXE), ct, limits()),
      400,
      "xml_dtd_forbidden",
      "<!DOCTYPE on line 2",
    );
  }
  // The single-line payload of the brief.
  await expectError(
    () =>
      decodeBody(
        utf8(`<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>`),
        "application/xml",
        limits(),
      ),
    400,
    "xml_dtd_forbidden",
  );
});

Deno.test("xml: billion laughs payload is rejected with 400 xml_dtd_forbidden", async () => {
  await expectError(
    () => decodeBody(utf8(BILLION_LAUGHS), "text/xml", limits()),
    400,
    "xml_dtd_forbidden",
  );
});

Deno.test("xml: every form of DTD markup is rejected, in any case", async () => {
  for (
    const doc of [
      `<!doctype html><html/>`,
      `<!DOCTYPE x SYSTEM "http://evil/x.dtd"><x/>`,
      `<!DOCTYPE x PUBLIC "-//X//EN" "x.dtd"><x/>`,
      `<!ENTITY e "x"><x/>`,
      `<x><!ENTITY e "x"></x>`,
      `<x><!ELEMENT x ANY></x>`,
      `<x/><!ATTLIST x a CDATA "">`,
      `<!NOTATION n SYSTEM "x"><x/>`,
    ]
  ) {
    await expectError(
      () => decodeBody(utf8(doc), "application/xml", limits()),
      400,
      "xml_dtd_forbidden",
    );
  }
});

/** A document nested `depth` elements deep (the root is depth 1). */
function nested(depth: number, selfClosingLeaf = false): string {
  if (selfClosingLeaf) return "<e>".repeat(depth - 1) + "<leaf/>" + "</e>".repeat(depth - 1);
  return "<e>".repeat(depth) + "x" + "</e>".repeat(depth);
}

Deno.test("xml: depth exactly max_xml_depth passes, one more is 413 xml_too_deep", async () => {
  const l = limits({ max_xml_depth: 5 });
  deepEqual(await decodeBody(utf8(nested(5)), "application/xml", l), {
    e: { e: { e: { e: { e: "x" } } } },
  });
  await expectError(
    () => decodeBody(utf8(nested(6)), "application/xml", l),
    413,
    "xml_too_deep",
    "max_xml_depth of 5",
  );
  // A self-closing element counts as a level too.
  deepEqual(await decodeBody(utf8(nested(5, true)), "application/xml", l), {
    e: { e: { e: { e: { leaf: "" } } } },
  });
  await expectError(
    () => decodeBody(utf8(nested(6, true)), "application/xml", l),
    413,
    "xml_too_deep",
  );
  // Siblings do not add depth.
  deepEqual(
    await decodeBody(utf8("<a><b/><b/><b/></a>"), "application/xml", limits({ max_xml_depth: 2 })),
    {
      a: { b: ["", "", ""] },
    },
  );
});

Deno.test("xml: the default limit of 100 and a configured limit above the parser's own default", async () => {
  await decodeBody(utf8(nested(100)), "application/xml", limits());
  await expectError(
    () => decodeBody(utf8(nested(101)), "application/xml", limits()),
    413,
    "xml_too_deep",
  );
  const data = await decodeBody(
    utf8(nested(250)),
    "application/xml",
    limits({ max_xml_depth: 250 }),
  );
  let node: unknown = data;
  let depth = 0;
  while (typeof node === "object" && node !== null) {
    node = (node as Record<string, unknown>).e;
    depth++;
  }
  equal(depth, 250);
  equal(node, "x");
});

Deno.test("xml: malformed documents are 400 invalid_xml with a reason and line", async () => {
  const cases: [string, string][] = [
    ["<a><b>1</b>", "element <a> is not closed"],
    ["<a>\n<b>1</a>", "expected </b> but found </a> (line 2)"],
    ["<a>1</a><c/>", "more than one root element"],
    ["<a>1</a>trailing", "text outside the root element"],
    ["leading<a/>", "text outside the root element"],
    ["just text", "text outside the root element"],
    ["   ", "no root element"],
    ["<!-- only a comment -->", "no root element"],
    ["</a>", "unexpected end tag </a>"],
    ["<a x=1>1</a>", "value of attribute x is not quoted"],
    ['<a x="1>1</a>', "not closed"],
    ['<a x="1"y="2"/>', "missing whitespace before an attribute"],
    ["<a x>1</a>", "attribute x has no value"],
    ['<a x="<">1</a>', "'<' in the value of attribute x"],
    ["<a><!-- open </a>", "comment is not closed"],
    ["<a><![CDATA[ open </a>", "CDATA section is not closed"],
    ["<a><?pi open </a>", "processing instruction is not closed"],
    ["<a>x & y</a>", "invalid or undeclared entity reference"],
    ["<a>&nbsp;</a>", "invalid or undeclared entity reference &nbsp;"],
    ['<a t="&e;"/>', "invalid or undeclared entity reference &e;"],
    ["<a>&#0;</a>", "invalid or undeclared entity reference &#0;"],
    ["<a>&#xD800;</a>", "invalid or undeclared entity reference"],
    ["<a>< b/></a>", "'<' not followed by a tag name"],
    ["<a/ >", "'/' not followed by '>'"],
    ["<a", "tag <a> is not closed"],
    ["<a></a", "end tag is not closed"],
    ["<a><!foo></a>", "unexpected '<!'"],
    ["<![CDATA[x]]><a/>", "CDATA outside the root element"],
    ["<__proto__>1</__proto__>", "__proto__"],
  ];
  for (const [doc, reason] of cases) {
    await expectError(
      () => decodeBody(utf8(doc), "application/xml", limits()),
      400,
      "invalid_xml",
      reason,
    );
  }
});

Deno.test("scanXml: well-formed edge cases pass", () => {
  scanXml(`<a x='1' y = "2"  ><b/><c  /></a  >`, 3);
  scanXml(`<a t="a > b &amp; c"/>`, 1);
  scanXml(`<a>]]&gt; -- &#x41; &#65;</a>`, 1);
  // References that end exactly where their text or attribute value ends.
  scanXml(`<a x="&lt;" y="&#65;">&amp;</a>`, 1);
  scanXml(`<a>&#x10FFFF;<b>&quot;</b>&apos;</a>`, 2);
  scanXml(`\n<?xml version="1.0"?>\n<!-- a -->\n<a/>\n<!-- b -->\n`, 1);
});

Deno.test("xml: charset from the parameter, a UTF-16 BOM or the declaration", async () => {
  // Parameter: ISO-8859-1 "é".
  const latin = new Uint8Array([...utf8("<n>Ren"), 0xe9, ...utf8("</n>")]);
  deepEqual(await decodeBody(latin, "text/xml; charset=iso-8859-1", limits()), { n: "René" });
  // Declaration when there is no parameter.
  const declared = new Uint8Array([
    ...utf8('<?xml version="1.0" encoding="ISO-8859-1"?><n>Ren'),
    0xe9,
    ...utf8("</n>"),
  ]);
  deepEqual(await decodeBody(declared, "application/xml", limits()), { n: "René" });
  equal(xmlCharset(declared, undefined), "ISO-8859-1");
  // The parameter wins over the declaration.
  equal(xmlCharset(declared, "utf-8"), "utf-8");
  // UTF-16LE with a byte order mark.
  const text = "<n>Zoë</n>";
  const utf16 = new Uint8Array(2 + text.length * 2);
  utf16[0] = 0xff;
  utf16[1] = 0xfe;
  for (let i = 0; i < text.length; i++) utf16[2 + i * 2] = text.charCodeAt(i);
  deepEqual(await decodeBody(utf16, "application/xml", limits()), { n: "Zoë" });
  // A UTF-8 BOM is skipped.
  deepEqual(
    await decodeBody(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("<a>1</a>")]), "text/xml", limits()),
    {
      a: "1",
    },
  );
});

Deno.test("xml: unknown charset is 415 (parameter or declaration)", async () => {
  await expectError(
    () => decodeBody(utf8("<a/>"), "text/xml; charset=nope", limits()),
    415,
    "unsupported_charset",
  );
  await expectError(
    () => decodeBody(utf8('<?xml version="1.0" encoding="nope"?><a/>'), "text/xml", limits()),
    415,
    "unsupported_charset",
  );
});

Deno.test("encodeData: XML round trip keeps the content type and the data", async () => {
  for (const ct of ["application/xml", "text/xml", "application/soap+xml"]) {
    const data = await decodeBody(utf8(PATIENT), ct, limits());
    const out = encodeData(data, ct);
    equal(out.contentType, ct);
    deepEqual(await decodeBody(out.bytes, out.contentType, limits()), PATIENT_DATA);
  }
});

Deno.test("encodeData: XML escapes text and attributes, numbers and booleans become text", async () => {
  const data = { r: { "@a": 'x & "y" <z>', t: "1 < 2 & 3", n: 7, b: true, list: ["a", "b"] } };
  const out = encodeData(data, "application/xml");
  equal(
    new TextDecoder().decode(out.bytes),
    '<r a="x &amp; &quot;y&quot; &lt;z&gt;"><t>1 &lt; 2 &amp; 3</t><n>7</n><b>true</b><list>a</list><list>b</list></r>',
  );
  deepEqual(await decodeBody(out.bytes, "application/xml", limits()), {
    r: { "@a": 'x & "y" <z>', t: "1 < 2 & 3", n: "7", b: "true", list: ["a", "b"] },
  });
});

Deno.test("encodeData: XML charset other than UTF-8 is replaced by utf-8", () => {
  const out = encodeData({ a: "é" }, "text/xml; charset=iso-8859-1");
  equal(out.contentType, "text/xml; charset=utf-8");
  equal(new TextDecoder().decode(out.bytes), "<a>é</a>");
});

Deno.test("encodeData: data without an XML shape falls back to JSON", () => {
  for (
    const data of [
      { a: 1, b: 2 }, // two roots
      { a: [1, 2] }, // repeated root
      [{ a: 1 }],
      "text",
      42,
      null,
      {},
      { "bad name": 1 },
      { a: { "1x": "y" } },
      { a: { "@bad attr": "y" } },
      { a: { "@x": { nested: true } } },
      { a: { "#text": { x: 1 } } },
      { a: { b: [[1, 2]] } },
    ]
  ) {
    equal(encodeXml(data), null, JSON.stringify(data));
    const out = encodeData(data, "application/xml");
    equal(out.contentType, "application/json");
    deepEqual(JSON.parse(new TextDecoder().decode(out.bytes)), data);
  }
});

Deno.test("xml: more than max_xml_attributes on one element is 413; 200,000 attributes are refused at once", async () => {
  const element = (n: number) =>
    `<r ${Array.from({ length: n }, (_, i) => `a${i}="${i}"`).join(" ")}/>`;
  const ok = await decodeBody(utf8(element(256)), "application/xml", limits());
  equal(Object.keys((ok as { r: object }).r).length, 256);
  await expectError(
    () => decodeBody(utf8(element(257)), "application/xml", limits()),
    413,
    "too_many_xml_attributes",
    "more than max_xml_attributes (256)",
  );
  // 200,000 attributes: refused, and at the limit, not at the end of the tag (the scan used to
  // walk the whole tag first, seconds of it). The proof is what is left unread, not a duration:
  // the same element with its 258th attribute broken (an unquoted value, seen only by reading
  // that attribute) is still 413 too_many_xml_attributes, never 400
  // invalid_xml, so the scan stopped at attribute 257.
  const text = element(200_000);
  await expectError(
    () => decodeBody(utf8(text), "application/xml", limits()),
    413,
    "too_many_xml_attributes",
  );
  const broken = text.replace(' a257="257"', " a257=257");
  equal(broken.length, text.length - 2, "attribute 258 was broken");
  // Read (with room for it), that attribute is refused.
  await expectError(
    () => scanXml(broken.slice(0, broken.indexOf(" a258=")) + "/>", 100, 1_000),
    400,
    "invalid_xml",
    "value of attribute a257 is not quoted",
  );
  await expectError(
    () => decodeBody(utf8(broken), "application/xml", limits()),
    413,
    "too_many_xml_attributes",
    "more than max_xml_attributes (256)",
  );
});

Deno.test("scanXml: linear in the attributes (no search to the end of the document per value)", () => {
  const element = (n: number) =>
    `<r ${Array.from({ length: n }, (_, i) => `a${i}="${i}"`).join(" ")}/>`;
  // Timed in CPU time, where 20k and 200k attributes already give about 10 (the per-attribute
  // cost dominates), as 100k and 1M did.
  const small = element(20_000);
  const large = element(200_000);
  const { ratio, linear } = cpuGrowth(
    () => scanXml(small, 100, 20_000),
    () => scanXml(large, 100, 200_000),
    40,
  );
  // Ten times the attributes: about ten times the time; the quadratic scan took about 100 times.
  ok_(linear, `200k attributes took ${ratio.toFixed(1)} times 20k`);
});

Deno.test("xml: exactly max_xml_references pass, one more is 413 too_many_xml_references", async () => {
  const l = limits({ max_xml_references: 3 });
  // Text and attribute values count alike; entity and character references alike.
  deepEqual(await decodeBody(utf8('<r a="&lt;">&amp;<b>&#65;</b></r>'), "application/xml", l), {
    r: { "@a": "<", "#text": "&", b: "A" },
  });
  await expectError(
    () => decodeBody(utf8('<r a="&lt;">&amp;<b>&#65;&#x42;</b></r>'), "application/xml", l),
    413,
    "too_many_xml_references",
    "more than max_xml_references (3)",
  );
  await expectError(
    () => decodeBody(utf8('<r a="&lt;&lt;&lt;&lt;"/>'), "application/xml", l),
    413,
    "too_many_xml_references",
  );
  // CDATA and comments are not scanned for references.
  deepEqual(
    await decodeBody(
      utf8("<r><!-- &amp;&amp; --><![CDATA[&amp;&amp;&amp;&amp;]]></r>"),
      "application/xml",
      l,
    ),
    { r: "&amp;&amp;&amp;&amp;" },
  );
  // The default limit: 100,000.
  const refs = (n: number) => utf8(`<r>${"&amp;".repeat(n)}</r>`);
  equal(
    ((await decodeBody(refs(100_000), "application/xml", limits())) as { r: string }).r.length,
    100_000,
  );
  await expectError(
    () => decodeBody(refs(100_001), "application/xml", limits()),
    413,
    "too_many_xml_references",
  );
});

Deno.test("decodeXmlEntities: what the regular expression it replaced decoded, and nothing else", () => {
  equal(decodeXmlEntities("&lt;&gt;&amp;&quot;&apos;"), `<>&"'`);
  equal(decodeXmlEntities("a&#65;b&#x42;c&#X43;&#x1F600;&#0000065;"), "aAbBcC😀A");
  // Not XML characters, more than 8 digits, no digits, no ';', unknown names: kept as they are.
  for (
    const kept of [
      "&#0;",
      "&#xD800;",
      "&#x110000;",
      "&#xFFFE;",
      "&#123456789;",
      "&#x000000041;",
      "&#;",
      "&#x;",
      "&#65",
      "&amp",
      "&AMP;",
      "&nbsp;",
      "&",
      "&&",
      "&#x4g;",
    ]
  ) {
    equal(decodeXmlEntities(kept), kept, kept);
    equal(decodeXmlEntities(`x${kept}&amp;y`), `x${kept}&y`, kept);
  }
  equal(decodeXmlEntities("&&amp;&#65;&"), "&&A&");
});

Deno.test("xml: 1,000,000 references (5 MB) are refused without holding the event loop", async () => {
  // They took 1.2 s to parse and decode, in one piece.
  for (
    const [name, body] of [
      ["in text", `<r>${"&amp;".repeat(1_000_000)}</r>`],
      ["character references", `<r>${"&#65;".repeat(1_000_000)}</r>`],
      ["in an attribute value", `<r a="${"&lt;".repeat(1_000_000)}"/>`],
      ["over many elements", `<r>${"<a>&gt;</a>".repeat(500_000)}</r>`],
    ]
  ) {
    const bytes = utf8(body);
    // Up to three runs (the first under 100 ms settles it), each refused with the code.
    const r = await stallUnder(
      () => decodeBody(bytes, "application/xml", limits()),
      100,
      (run) => equal((run.error as { code?: string })?.code, "too_many_xml_references", name),
    );
    ok_(r.stallMs < 100, `${name}: the event loop was held ${r.stallMs.toFixed(0)} ms`);
  }
  // At the limit the body is parsed, within the same bound.
  const atLimit = utf8(`<r>${"&amp;x".repeat(100_000)}</r>`);
  const r = await stallUnder(
    () => decodeBody(atLimit, "application/xml", limits()),
    100,
    (run) => equal(run.error, undefined),
  );
  ok_(r.stallMs < 100, `100,000 references: the event loop was held ${r.stallMs.toFixed(0)} ms`);
});

Deno.test("xml: references cost linear time to scan and decode", () => {
  // Timed in CPU time (not wall time, which a busy machine stretches: 54.8 once for linear
  // work), where 10k and 100k references already give about 10, as 100k and 1M did.
  const text = (n: number) => `<r a="${"&#x41;".repeat(n)}">${"&amp;x".repeat(n)}</r>`;
  const small = text(10_000);
  const large = text(100_000);
  const scan = cpuGrowth(
    () => scanXml(small, 100, 256, 20_000),
    () => scanXml(large, 100, 256, 200_000),
    40,
  );
  ok_(scan.linear, `scan: 100k references took ${scan.ratio.toFixed(1)} times 10k`);
  const value = (n: number) => "x&lt;".repeat(n);
  const smallValue = value(10_000);
  const largeValue = value(100_000);
  const decode = cpuGrowth(
    () => decodeXmlEntities(smallValue),
    () => decodeXmlEntities(largeValue),
    40,
  );
  ok_(decode.linear, `decode: 100k references took ${decode.ratio.toFixed(1)} times 10k`);
});

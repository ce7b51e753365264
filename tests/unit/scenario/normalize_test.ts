import { assert, assertEquals } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import {
  applyCallerRules,
  BUILT_IN_RULES,
  canonicalJson,
  canonicalRules,
  commitNormalization,
  compareCodePoints,
  eventWithoutVolatiles,
  type NormalizationRule,
  normalizationRulesSchema,
  normalizeText,
  parseNormalizationRules,
  relativeToStartUrl,
  sha256Hex,
  sortCanonically,
  START_URL_TOKEN,
} from "../../../src/scenario/normalize.ts";

Deno.test("canonicalJson sorts keys by code point, keeps array order, has no whitespace", () => {
  // U+FFFF sorts before U+1F600 by code point, after it by UTF-16 code unit (0xD83D).
  const value = { b: [3, 1, { z: true, a: null }], a: 'x"y', "\u{1F600}": 1, "\uFFFF": 2, skip: undefined };
  assertEquals(canonicalJson(value), `{"a":"x\\"y","b":[3,1,{"a":null,"z":true}],"\uFFFF":2,"\u{1F600}":1}`);
  assertEquals(canonicalJson({ n: -0, f: 1.5, e: 1e21 }), '{"e":1e+21,"f":1.5,"n":0}');
  assertEquals(canonicalJson("line\nbreak"), JSON.stringify("line\nbreak"));
});

Deno.test("compareCodePoints agrees with decoding every code point", () => {
  const reference = (a: string, b: string) => {
    const x = [...a].map((c) => c.codePointAt(0) ?? 0);
    const y = [...b].map((c) => c.codePointAt(0) ?? 0);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return Math.sign(x[i] - y[i]);
    return Math.sign(x.length - y.length);
  };
  const alphabet = ["a", "z", "\u00e9", "\ud7ff", "\ue000", "\uffff", "\u{10000}", "\u{1f600}", "\u{10ffff}"];
  let seed = 7;
  const pick = () => alphabet[(seed = (seed * 1103515245 + 12345) % 2147483648) % alphabet.length];
  for (let n = 0; n < 500; n++) {
    const a = Array.from({ length: n % 4 }, pick).join("");
    const b = Array.from({ length: (n >> 2) % 4 }, pick).join("");
    assertEquals(
      Math.sign(compareCodePoints(a, b)),
      reference(a, b),
      `${JSON.stringify(a)} vs ${JSON.stringify(b)}`,
    );
  }
});

Deno.test("canonicalJson refuses values JSON cannot represent instead of changing them", () => {
  for (const bad of [Number.NaN, Infinity, [undefined], 1n, () => 0]) {
    let threw = false;
    try {
      canonicalJson(bad);
    } catch (error) {
      threw = error instanceof TypeError;
    }
    assert(threw, `expected a TypeError for ${String(bad)}`);
  }
});

Deno.test("sha256Hex matches the FIPS 180-2 vector for strings and bytes", () => {
  const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  assertEquals(sha256Hex("abc"), abc);
  assertEquals(sha256Hex(new TextEncoder().encode("abc")), abc);
  assertEquals(
    sha256Hex(""),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
});

function rule(rule_id: string, artifacts: NormalizationRule["artifacts"], match = "x", replacement = "y") {
  return { rule_id, artifacts, match, replacement };
}

Deno.test("normalization rules: valid rules parse", () => {
  const rules = [rule("a", ["dom", "url"]), rule("b", ["events"], "t", "")];
  assertEquals(parseNormalizationRules(rules), rules);
  assertEquals(parseNormalizationRules([]), []);
});

Deno.test("normalization rules: each invalid rule fails naming the path", () => {
  const many = Array.from({ length: 33 }, (_, i) => rule(`r${i}`, ["dom"]));
  const cases: { name: string; rules: unknown; path: string; problem?: RegExp }[] = [
    { name: "empty rule_id", rules: [rule("", ["dom"])], path: "rules.0.rule_id" },
    {
      name: "rule_id over 64",
      rules: [rule("r".repeat(65), ["dom"])],
      path: "rules.0.rule_id",
      problem: /65 characters, over the limit of 64/,
    },
    { name: "no artifacts", rules: [rule("a", [])], path: "rules.0.artifacts" },
    {
      name: "nine artifacts",
      rules: [{ ...rule("a", ["dom"]), artifacts: Array(9).fill("dom") }],
      path: "rules.0.artifacts",
      problem: /9 entries, over the limit of 8/,
    },
    { name: "repeated artifact", rules: [rule("a", ["dom", "dom"])], path: "rules.0.artifacts" },
    {
      name: "screenshot is not normalizable",
      rules: [{ ...rule("a", ["dom"]), artifacts: ["screenshot"] }],
      path: "rules.0.artifacts.0",
    },
    { name: "empty match", rules: [rule("a", ["dom"], "")], path: "rules.0.match" },
    {
      name: "match over 1000",
      rules: [rule("a", ["dom"], "m".repeat(1001))],
      path: "rules.0.match",
      problem: /1001 characters, over the limit of 1000/,
    },
    {
      name: "replacement over 1000",
      rules: [rule("a", ["dom"], "m", "r".repeat(1001))],
      path: "rules.0.replacement",
      problem: /over the limit of 1000/,
    },
    { name: "33 rules", rules: many, path: "rules", problem: /33 normalization rules, over the limit of 32/ },
    { name: "duplicate rule_id", rules: [rule("a", ["dom"]), rule("a", ["url"])], path: "rules.1.rule_id" },
    { name: "unknown field", rules: [{ ...rule("a", ["dom"]), regex: true }], path: "rules.0" },
    {
      name: "missing replacement",
      rules: [{ rule_id: "a", artifacts: ["dom"], match: "x" }],
      path: "rules.0.replacement",
    },
    { name: "not an array", rules: { a: 1 }, path: "rules" },
  ];
  for (const c of cases) {
    let error: unknown;
    try {
      parseNormalizationRules(c.rules);
    } catch (e) {
      error = e;
    }
    assert(error instanceof ToolError, `${c.name}: expected a ToolError`);
    assertEquals(error.code, "invalid_normalization_rules", c.name);
    assertEquals(error.details?.path, c.path, c.name);
    assertEquals(error.affected?.argument, c.path, c.name);
    assert(error.message.includes(c.path), `${c.name}: ${error.message}`);
    assert(error.recovery !== undefined && error.recovery.length > 0, c.name);
    if (c.problem) assert(c.problem.test(error.message), `${c.name}: ${error.message}`);
  }
  // The exported schema is the same check the parser runs.
  assert(!normalizationRulesSchema.safeParse(many).success);
});

Deno.test("commitment: built-in rules listed in order, digest over the canonical document", () => {
  const rules = [rule("b", ["url", "dom"]), rule("a", ["events"])];
  const commitment = commitNormalization(rules);
  assertEquals(commitment.built_in_rules, [...BUILT_IN_RULES]);
  assertEquals(commitment.built_in_rules.slice(0, 10), [
    "ignore_step_elapsed_ms",
    "ignore_step_session_times",
    "ignore_event_sequence",
    "ignore_event_step_index",
    "ignore_event_session_time",
    "ignore_interaction_ids",
    "ignore_request_ids",
    "relative_to_start_url",
    "compare_screenshot_content_digest",
    "compare_normalized_text_content",
  ]);
  assertEquals(commitment.rules, [rule("a", ["events"]), rule("b", ["dom", "url"])]);
  const expected = sha256Hex(
    `{"built_in_rules":${JSON.stringify(BUILT_IN_RULES)},"rules":[` +
      `{"artifacts":["events"],"match":"x","replacement":"y","rule_id":"a"},` +
      `{"artifacts":["dom","url"],"match":"x","replacement":"y","rule_id":"b"}],` +
      `"schema":"krometrail.scenario.normalization/1"}`,
  );
  assertEquals(commitment.sha256, expected);
});

Deno.test("commitment: the same policy in any order gives the same digest; another policy another", () => {
  const policy = [
    rule("zeta", ["url", "history", "dom"], "1", "2"),
    rule("alpha", ["storage", "events"], "3", "4"),
    rule("mid", ["accessibility", "action_state"], "5", ""),
  ];
  const reference = commitNormalization(policy);
  const shuffles = [
    [policy[2], policy[0], policy[1]],
    [policy[1], policy[2], policy[0]],
    policy.map((r) => ({ ...r, artifacts: [...r.artifacts].reverse() })).reverse(),
  ];
  for (const shuffled of shuffles) {
    const c = commitNormalization(shuffled);
    assertEquals(c.sha256, reference.sha256);
    assertEquals(c.rules, reference.rules);
  }
  assertEquals(commitNormalization(policy).sha256, reference.sha256);
  assert(commitNormalization([]).sha256 !== reference.sha256);
  assert(
    commitNormalization([{ ...policy[0], replacement: "3" }]).sha256 !==
      commitNormalization([policy[0]]).sha256,
  );
  // The input is not reordered in place.
  assertEquals(policy[0].rule_id, "zeta");
  assertEquals(policy[0].artifacts, ["url", "history", "dom"]);
});

Deno.test("caller rules: exact literals, every occurrence, rule_id order, named kinds only, values only", () => {
  const rules = canonicalRules([rule("b", ["dom"], "y", "z"), rule("a", ["dom"], "x", "y")]);
  // a runs first (x -> y), then b (y -> z), whatever the input order.
  assertEquals(applyCallerRules("x x y", "dom", rules), "z z z");
  assertEquals(applyCallerRules("x", "url", rules), "x");
  const literal = canonicalRules([rule("dot", ["url"], "a.b", "_")]);
  assertEquals(applyCallerRules(["axb", "a.b?a.b"], "url", literal), ["axb", "_?_"]);
  const nested = applyCallerRules({ "a.b": { list: ["a.b", 3, null] } }, "url", literal);
  assertEquals(nested, { "a.b": { list: ["_", 3, null] } });
});

Deno.test("relative_to_start_url replaces the literal start URL and its parsed form", () => {
  assertEquals(
    relativeToStartUrl(["http://h:1/app?bug=1#x", "http://h:1/other"], "http://h:1/app?bug=1"),
    [`${START_URL_TOKEN}#x`, "http://h:1/other"],
  );
  // new URL adds the trailing slash the page reports.
  assertEquals(relativeToStartUrl("http://h:1/", "http://h:1"), START_URL_TOKEN);
  assertEquals(relativeToStartUrl({ url: "http://h:1" }, "http://h:1"), { url: START_URL_TOKEN });
  assertEquals(relativeToStartUrl("anything", ""), "anything");
  // Only a whole URL: a start URL continued by a path or query is another page.
  assertEquals(
    relativeToStartUrl([
      "http://h/page",
      "http://h/?q=1",
      "http://h/",
      "at http://h/:12:5",
      "go 'http://h/' now",
    ], "http://h/"),
    [
      "http://h/page",
      "http://h/?q=1",
      START_URL_TOKEN,
      `at ${START_URL_TOKEN}:12:5`,
      `go '${START_URL_TOKEN}' now`,
    ],
  );
  assertEquals(relativeToStartUrl("http://h/x http://h/", "http://h/"), `http://h/x ${START_URL_TOKEN}`);
});

Deno.test("text normalization: line endings, trailing spaces, blank-line runs", () => {
  assertEquals(normalizeText("a  \r\nb\t\r\n\r\n\r\n\r\nc\rd \n\n"), "a\nb\n\nc\nd");
  assertEquals(normalizeText("\n\n  lead\n"), "  lead");
  assertEquals(normalizeText("same"), "same");
});

Deno.test("events lose sequence, step index, session time and per-run ids, keep declared ids", () => {
  const event = {
    sequence: 4,
    step_index: 2,
    time_ms: 812.5,
    kind: "request",
    request_id: "1234.5",
    frame_id: "F1",
    loader_id: "L",
    id: 7,
    guid: "g",
    route_id: "api",
    step_id: "open",
    url: "http://h/",
    header_names: ["accept"],
  };
  assertEquals(eventWithoutVolatiles(event), {
    kind: "request",
    route_id: "api",
    step_id: "open",
    url: "http://h/",
    header_names: ["accept"],
  });
});

Deno.test("sortCanonically orders by canonical JSON, independent of input order", () => {
  const a = { kind: "console", text: "b" };
  const b = { text: "a", kind: "console" };
  assertEquals(sortCanonically([a, b]), [b, a]);
  assertEquals(sortCanonically([b, a]), [b, a]);
});

/**
 * The legible DOM over the committed real rrweb recordings (fixtures/recordings, made by the npm recorder in
 * Chromium): the budget holds after every event of every recording, and the checkout's critical instants read
 * as the states the page went through.
 */
import { assert } from "../../assert.ts";
import type { eventWithTime } from "@rrweb/types";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import { legibleDom } from "../../../src/pagestate/legible.ts";
import { parseSelector, querySelector } from "../../../src/pagestate/selector.ts";

const DIR = new URL("../../../fixtures/recordings/", import.meta.url);

async function load(name: string): Promise<eventWithTime[]> {
  return JSON.parse(await Deno.readTextFile(new URL(`${name}.json`, DIR)));
}

for (const name of ["checkout", "table300", "utility_soup"]) {
  Deno.test(`legible over the ${name} recording: 60 lines / 1,200 characters after every event`, async () => {
    const events = await load(name);
    const mirror = new DomMirror();
    let checked = 0;
    let worst = { lines: 0, chars: 0, source: 0 };
    for (const e of events) {
      mirror.apply(e);
      const doc = mirror.document;
      if (!doc) continue;
      const r = legibleDom(doc);
      checked++;
      assert(
        r.line_count <= 60 && r.char_count <= 1200,
        `${name} at ${e.timestamp}: ${r.line_count}/${r.char_count}`,
      );
      assert(r.text.length === r.char_count && r.text.split("\n").length === r.line_count);
      assert(/— .*lines.*chars \(source [\d,]+ chars\)/.test(r.text), "the footer is always there");
      if (r.truncated) {
        assert(r.advice !== undefined && r.text.endsWith(r.advice), "truncation ends with advice");
      }
      if (r.char_count > worst.chars) {
        worst = { lines: r.line_count, chars: r.char_count, source: r.source_html_chars };
      }
    }
    assert(checked > 0);
    console.error(
      `${name}: ${checked} instants, largest response ${worst.chars} chars / ${worst.lines} lines from ` +
        `${worst.source} chars of HTML (${(worst.source / worst.chars).toFixed(1)}×)`,
    );
  });
}

Deno.test("legible over the checkout recording: the end state shows the empty select, the error, the disabled submit", async () => {
  const mirror = new DomMirror();
  for (const e of await load("checkout")) mirror.apply(e);
  const doc = mirror.document;
  assert(doc);
  const form = querySelector(doc, parseSelector("form#checkout"));
  assert(form);
  const r = legibleDom(form);
  for (
    const line of [
      "select#province[name=province] [empty options: 0] aria-invalid=true",
      'div.error "Province is required"',
      'button#submit[type=submit] "Place order" [DISABLED]',
    ]
  ) assert(r.text.split("\n").some((l) => l.trim() === line), `${line}\n${r.text}`);
  const truth = JSON.parse(await Deno.readTextFile(new URL("checkout.truth.json", DIR)));
  for (const secret of truth.secrets as string[]) {
    assert(!r.text.includes(secret), "typed secrets never show");
  }
  console.error(
    `checkout form#checkout: ${r.source_html_chars} → ${r.char_count} chars (${
      (r.source_html_chars / r.char_count).toFixed(2)
    }×)`,
  );
});

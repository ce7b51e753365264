import { assert, assertEquals } from "../../assert.ts";
import {
  isHeadless,
  isPdf,
  paperSize,
  pdfPageCount,
  pdfRequiresHeadless,
  printParams,
} from "../../../src/devtools/pdf.ts";
import type { SessionConfig } from "../../../src/browser/session.ts";

const config = (headless: boolean): SessionConfig => ({
  every_nth_frame: 1,
  focus: "preserve",
  headless,
  record_dom: true,
});

Deno.test("save_pdf: headless from the launch config, or an attached browser's product", () => {
  assert(isHeadless({ mode: "launched", config: config(true), browserVersion: "Chrome/156.0" }));
  assert(!isHeadless({ mode: "launched", config: config(false), browserVersion: "Chrome/156.0" }));
  // Attached sessions record headless: false; the product says what the browser really is.
  assert(isHeadless({ mode: "attached", config: config(false), browserVersion: "HeadlessChrome/156.0.1" }));
  assert(!isHeadless({ mode: "attached", config: config(false), browserVersion: "Chrome/156.0.1" }));
  // Chromium 156 headless: product "Chrome/…", default user agent "… HeadlessChrome/156.0.0.0 …".
  const ua =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0";
  assert(isHeadless({ mode: "attached", config: config(false), browserVersion: "Chrome/156.0.1" }, ua));
  assert(
    !isHeadless({ mode: "attached", config: config(false), browserVersion: "Chrome/156.0.1" }, "Chrome/156"),
  );
  const err = pdfRequiresHeadless("attached", "Chrome/156.0.1");
  assertEquals(err.code, "pdf_requires_headless");
  assert(/headless/.test(err.recovery ?? "") && /Chrome prints to PDF only in headless/.test(err.message));
});

Deno.test("save_pdf: paper sizes and print parameters", () => {
  assertEquals(paperSize(undefined), { width_in: 8.5, height_in: 11 });
  assertEquals(paperSize("a4"), { width_in: 8.27, height_in: 11.69 });
  assertEquals(paperSize({ width_in: 4, height_in: 6 }), { width_in: 4, height_in: 6 });
  assertEquals(printParams({ landscape: true, paper: "a4", page_ranges: "1-2", scale: 0.5 }), {
    landscape: true,
    printBackground: false,
    scale: 0.5,
    paperWidth: 8.27,
    paperHeight: 11.69,
    pageRanges: "1-2",
    transferMode: "ReturnAsBase64",
  });
});

Deno.test("save_pdf: page objects are counted, the page tree is not", () => {
  const pdf = new TextEncoder().encode(
    "%PDF-1.4\n1 0 obj <</Type /Pages /Kids [2 0 R 3 0 R] /Count 2>> endobj\n" +
      "2 0 obj <</Type /Page /Parent 1 0 R>> endobj\n3 0 obj <</Type/Page>> endobj\n%%EOF",
  );
  assert(isPdf(pdf));
  assertEquals(pdfPageCount(pdf), 2);
  assertEquals(pdfPageCount(new TextEncoder().encode("%PDF-1.7 compressed")), undefined);
  assert(!isPdf(new TextEncoder().encode("<html>")));
});

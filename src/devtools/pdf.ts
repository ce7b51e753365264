/**
 * Page.printToPDF: Chrome prints to PDF only in headless mode (headed Chrome answers "PrintToPDF is not
 * implemented"), so the session's mode is checked first: a launched session knows it from its config; an
 * attached one asks the browser, whose default user agent says "HeadlessChrome" (Chromium 156's product
 * string is "Chrome/…" in headless mode too, and a page's user-agent override does not change this one).
 */
import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";

export type Paper = "letter" | "a4" | { width_in: number; height_in: number };

const PAPERS = {
  letter: { width_in: 8.5, height_in: 11 },
  a4: { width_in: 8.27, height_in: 11.69 },
} as const;

export interface PdfOptions {
  landscape?: boolean;
  print_background?: boolean;
  scale?: number;
  paper?: Paper;
  page_ranges?: string;
}

type SessionMode = Pick<BrowserSession, "config" | "mode" | "browserVersion">;

/** What the session's browser is: a launched one by its config, any other by its product and user agent. */
export function isHeadless(session: SessionMode, userAgent?: string): boolean {
  if (session.mode === "launched" && session.config.headless) return true;
  return /headless/i.test(session.browserVersion) || /HeadlessChrome\//.test(userAgent ?? "");
}

export async function sessionHeadless(session: SessionMode, page: PageTarget): Promise<boolean> {
  if (isHeadless(session)) return true;
  const version = await page.send("Browser.getVersion", undefined, 5_000).catch(() => undefined);
  return isHeadless(session, version?.userAgent);
}

export function pdfRequiresHeadless(mode: string, product: string): ToolError {
  return new ToolError({
    code: "pdf_requires_headless",
    message: `This ${mode} browser (${
      product || "unknown product"
    }) is not headless, and Chrome prints to PDF only in headless mode.`,
    retry: "after_recovery",
    recovery:
      "Start a headless session (start_browser with headless: true, or KROMETRAIL_HEADLESS=1 in the server's environment) and open the page there; or take_screenshot with full_page: true for a picture of it.",
    details: { mode, product },
  });
}

export function paperSize(paper: Paper | undefined): { width_in: number; height_in: number } {
  if (paper === undefined) return PAPERS.letter;
  return typeof paper === "string" ? PAPERS[paper] : paper;
}

export function printParams(o: PdfOptions): Protocol.Page.PrintToPDFRequest {
  const size = paperSize(o.paper);
  return {
    landscape: o.landscape ?? false,
    printBackground: o.print_background ?? false,
    scale: o.scale ?? 1,
    paperWidth: size.width_in,
    paperHeight: size.height_in,
    ...(o.page_ranges !== undefined ? { pageRanges: o.page_ranges } : {}),
    transferMode: "ReturnAsBase64",
  };
}

/**
 * Pages of a PDF Chrome (Skia) wrote: its page objects are plain dictionaries, so counting `/Type /Page`
 * (not `/Pages`) is exact there; undefined when none is found (a compressed object stream).
 */
export function pdfPageCount(bytes: Uint8Array): number | undefined {
  const text = new TextDecoder("latin1").decode(bytes);
  const n = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  return n > 0 ? n : undefined;
}

export function isPdf(bytes: Uint8Array): boolean {
  return bytes.length >= 5 && new TextDecoder().decode(bytes.subarray(0, 5)) === "%PDF-";
}

/** Chrome's answer to an unparseable or out-of-range page_ranges, as a structured argument error. */
export function badPageRanges(ranges: string, message: string): ToolError {
  return new ToolError({
    code: "invalid_page_ranges",
    message: `Chrome refused page_ranges ${JSON.stringify(ranges)}: ${message}.`,
    retry: "never",
    recovery:
      'Give 1-based pages and ranges that exist in the printout, e.g. "1-3, 5"; omit it for every page.',
    affected: { argument: "page_ranges" },
    details: { page_ranges: ranges },
  });
}

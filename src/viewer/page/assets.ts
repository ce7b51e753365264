/**
 * The viewer page's files by path under /<token>/: string constants compiled into the binary (no file
 * is read at run time, and there is no build step). Plain ES modules, no framework.
 */
import { INDEX_HTML } from "./html.ts";
import { MAIN_JS } from "./main_js.ts";
import { PANELS_JS } from "./panels_js.ts";
import { QUESTION_JS } from "./question_js.ts";
import { STYLE_CSS } from "./style.ts";
import { TIMELINE_JS } from "./timeline_js.ts";
import { UTIL_JS } from "./util_js.ts";

export interface PageAsset {
  type: string;
  body: string;
}

const JS = "text/javascript; charset=utf-8";

/** A timeline strip with a playhead, so a browser never asks for /favicon.ico outside the token. */
const FAVICON =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1e1e1e"/>
<rect x="2" y="9" width="12" height="3" rx="1" fill="#3794ff"/><rect x="9" y="3" width="2" height="11" fill="#fff"/></svg>`;

export const PAGE_ASSETS: Readonly<Record<string, PageAsset>> = {
  "/index.html": { type: "text/html; charset=utf-8", body: INDEX_HTML },
  "/favicon.svg": { type: "image/svg+xml", body: FAVICON },
  "/style.css": { type: "text/css; charset=utf-8", body: STYLE_CSS },
  "/js/main.js": { type: JS, body: MAIN_JS },
  "/js/util.js": { type: JS, body: UTIL_JS },
  "/js/timeline.js": { type: JS, body: TIMELINE_JS },
  "/js/panels.js": { type: JS, body: PANELS_JS },
  "/js/question.js": { type: JS, body: QUESTION_JS },
};

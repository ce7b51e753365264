/**
 * The control flow benchmark's 40 actions (bench/control_flow.ts), each as krometrail's call and, where the
 * peer has an equivalent tool, @playwright/mcp's and chrome-devtools-mcp's. Krometrail and Playwright target
 * the same CSS selectors; chrome-devtools-mcp targets elements only by the `uid` of its latest
 * `take_snapshot`, so each of its element steps is a snapshot, the uid read from its text by the element's
 * role and accessible name, then the action, timed together.
 */

export interface Result {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}
export interface Call {
  name: string;
  args: Record<string, unknown>;
}
/** A call, or one built from what earlier calls of the run returned. */
export type CallSpec = Call | ((ctx: Ctx) => Call);
export interface Ctx {
  /** Each tool's latest result in this run, by tool name. */
  last: Map<string, Result>;
}
/** One action. `expect` names an error code that is the correct outcome (e.g. an intercepted click). */
export interface Step {
  label: string;
  krometrail: CallSpec;
  /** The peers' equivalents, as one or more calls timed together; absent when a peer has none. */
  playwright?: Call[];
  devtools?: CallSpec[];
  expect?: string;
}

export const textOf = (r: Result | undefined) =>
  (r?.content ?? []).map((c) => c.text ?? "").join(" ").replace(/\s+/g, " ");

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The uid of the first element in the latest take_snapshot whose line reads `uid=… <what>`. */
function uidOf(ctx: Ctx, what: string): string {
  const text = (ctx.last.get("take_snapshot")?.content ?? []).map((c) => c.text ?? "").join("\n");
  const m = text.match(new RegExp(`uid=(\\S+) ${escape(what)}(?: |$)`, "m"));
  if (!m) throw new Error(`bench: no ${what} in chrome-devtools-mcp's snapshot`);
  return m[1];
}

/** The id of the page list_pages lists besides `opener` (the popup). */
function otherPage(ctx: Ctx, opener: number): number {
  const text = (ctx.last.get("list_pages")?.content ?? []).map((c) => c.text ?? "").join("\n");
  const ids = [...text.matchAll(/^(\d+): /gm)].map((m) => Number(m[1])).filter((id) => id !== opener);
  if (ids.length === 0) throw new Error("bench: no second page in chrome-devtools-mcp's list_pages");
  return ids[0];
}

/**
 * The flow. `upload` is the file to upload (inside the peer's workspace for the peers); `pageId` is
 * chrome-devtools-mcp's first page, which its page-scoped tools name.
 */
export function steps(origin: string, upload: string, pageId = 1): Step[] {
  const UPLOAD = upload;
  const snap: Call = { name: "take_snapshot", args: { pageId } };
  /** chrome-devtools-mcp: a snapshot, then `make` with the uid of the element whose line reads `what`. */
  const byUid = (what: string, make: (uid: string) => Call): CallSpec[] => [
    snap,
    (ctx) => make(uidOf(ctx, what)),
  ];
  const dtClick = (what: string) => byUid(what, (uid) => ({ name: "click", args: { pageId, uid } }));
  const dtFill = (what: string, value: string) =>
    byUid(what, (uid) => ({ name: "fill", args: { pageId, uid, value } }));
  const dtKey = (key: string): CallSpec[] => [{ name: "press_key", args: { pageId, key } }];
  const nav = (page: string): Step => ({
    label: `navigate ${page}`,
    krometrail: { name: "navigate_page", args: { url: `${origin}/${page}` } },
    playwright: [{ name: "browser_navigate", args: { url: `${origin}/${page}` } }],
    devtools: [{ name: "navigate_page", args: { pageId, type: "url", url: `${origin}/${page}` } }],
  });
  /** `what`: the element's line in chrome-devtools-mcp's snapshot, after its uid. */
  const click = (selector: string, what: string, expect?: string): Step => ({
    label: `click ${selector}`,
    krometrail: { name: "click", args: { selector } },
    playwright: [{ name: "browser_click", args: { element: selector, target: selector } }],
    devtools: dtClick(what),
    ...(expect ? { expect } : {}),
  });
  const dialog = (accept: boolean, text?: string): Step => ({
    label: `dialog ${accept ? "accept" : "dismiss"}`,
    krometrail: {
      name: "handle_dialog",
      args: { action: accept ? "accept" : "dismiss", ...(text ? { prompt_text: text } : {}) },
    },
    playwright: [{ name: "browser_handle_dialog", args: { accept, ...(text ? { promptText: text } : {}) } }],
    devtools: [{
      name: "handle_dialog",
      args: { pageId, action: accept ? "accept" : "dismiss", ...(text ? { promptText: text } : {}) },
    }],
  });
  return [
    nav("form.html"),
    {
      label: "snapshot",
      krometrail: { name: "snapshot_page", args: {} },
      playwright: [{ name: "browser_snapshot", args: {} }],
      devtools: [snap],
    },
    {
      label: "fill date",
      krometrail: { name: "fill", args: { selector: "#when", value: "2026-12-24" } },
      playwright: [{ name: "browser_type", args: { element: "date", target: "#when", text: "2026-12-24" } }],
      devtools: dtFill(`Date "Meeting date"`, "2026-12-24"),
    },
    {
      label: "fill time",
      krometrail: { name: "fill", args: { selector: "#at", value: "13:45" } },
      playwright: [{ name: "browser_type", args: { element: "time", target: "#at", text: "13:45" } }],
      devtools: dtFill(`InputTime "Meeting time"`, "13:45"),
    },
    click("#agree", `checkbox "I agree"`),
    {
      label: "select option",
      krometrail: { name: "select_option", args: { selector: "#fruit", label: "Cherry" } },
      playwright: [{
        name: "browser_select_option",
        args: { element: "fruit", target: "#fruit", values: ["Cherry"] },
      }],
      devtools: dtFill(`combobox "Fruit"`, "Cherry"),
    },
    {
      // chrome-devtools-mcp's fill sets one option of a <select>: no equivalent.
      label: "select multiple",
      krometrail: { name: "select_option", args: { selector: "#colors", value: ["red", "blue"] } },
      playwright: [
        {
          name: "browser_select_option",
          args: { element: "colors", target: "#colors", values: ["red", "blue"] },
        },
      ],
    },
    {
      label: "upload via styled label",
      krometrail: { name: "upload_files", args: { selector: "label[for=avatar]", paths: [UPLOAD] } },
      playwright: [
        { name: "browser_click", args: { element: "avatar label", target: "label[for=avatar]" } },
        { name: "browser_file_upload", args: { paths: [UPLOAD] } },
      ],
      // The label's text (it opens the file chooser); the hidden input is listed as a button too.
      devtools: byUid(`"Choose avatar"`, (uid) => ({
        name: "upload_file",
        args: { pageId, uid, filePaths: [UPLOAD] },
      })),
    },
    {
      label: "hover",
      krometrail: { name: "hover", args: { selector: "#hover-card" } },
      playwright: [{ name: "browser_hover", args: { element: "card", target: "#hover-card" } }],
      devtools: byUid(`"Hover card"`, (uid) => ({ name: "hover", args: { pageId, uid } })),
    },
    {
      label: "drag and drop",
      krometrail: { name: "drag", args: { selector: "#drag-item", to: { selector: "#drop-zone" } } },
      playwright: [{
        name: "browser_drag",
        args: {
          startElement: "item",
          startTarget: "#drag-item",
          endElement: "zone",
          endTarget: "#drop-zone",
        },
      }],
      devtools: [snap, (ctx) => ({
        name: "drag",
        args: { pageId, from_uid: uidOf(ctx, `"Drag me"`), to_uid: uidOf(ctx, `"Drop here"`) },
      })],
    },
    {
      // chrome-devtools-mcp has no scroll or wheel tool.
      label: "scroll by offset",
      krometrail: { name: "scroll", args: { dy: 600, inline_images: false } },
      playwright: [{ name: "browser_mouse_wheel", args: { deltaX: 0, deltaY: 600 } }],
    },
    {
      label: "scroll to element",
      krometrail: { name: "scroll", args: { selector: "#far-button", inline_images: false } },
    },
    click("#far-button", `button "Far away button"`),
    {
      label: "press Tab",
      krometrail: { name: "press_keys", args: { keys: "Tab" } },
      playwright: [{ name: "browser_press_key", args: { key: "Tab" } }],
      devtools: dtKey("Tab"),
    },
    nav("overlay.html"),
    click("#covered", `button "Covered button"`, "click_intercepted"),
    {
      // chrome-devtools-mcp has no click by coordinates.
      label: "canvas click by coordinates",
      krometrail: { name: "click", args: { x: 150, y: 320 } },
      playwright: [{ name: "browser_mouse_click_xy", args: { x: 150, y: 320 } }],
    },
    nav("dialogs.html"),
    click("#alert", `button "Show alert"`),
    dialog(true),
    click("#confirm", `button "Ask confirm"`),
    dialog(false),
    click("#prompt", `button "Ask prompt"`),
    dialog(true, "Ada"),
    nav("download.html"),
    { label: "list downloads", krometrail: { name: "list_downloads", args: {} } },
    click("#report", `link "Download report"`),
    {
      label: "wait for the download",
      krometrail: (ctx) => ({
        name: "wait_for_download",
        args: {
          after: Number(ctx.last.get("list_downloads")?.structuredContent?.cursor ?? 0),
          timeout_ms: 10_000,
        },
      }),
    },
    nav("popup.html"),
    click("#open", `button "Open popup"`),
    {
      label: "list pages",
      krometrail: { name: "list_pages", args: {} },
      playwright: [{ name: "browser_tabs", args: { action: "list" } }],
      devtools: [{ name: "list_pages", args: {} }],
    },
    {
      label: "select the popup",
      krometrail: { name: "select_page", args: { page_id: "p2" } },
      playwright: [{ name: "browser_tabs", args: { action: "select", index: 1 } }],
      devtools: [(ctx) => ({ name: "select_page", args: { pageId: otherPage(ctx, pageId) } })],
    },
    {
      label: "close the popup",
      krometrail: { name: "close_page", args: {} },
      playwright: [{ name: "browser_tabs", args: { action: "close" } }],
      devtools: [(ctx) => ({ name: "close_page", args: { pageId: otherPage(ctx, pageId) } })],
    },
    nav("index.html"),
    {
      label: "query by role",
      krometrail: { name: "query_page", args: { locator: { role: "button", name: "Show details" } } },
    },
    click("#reveal", `button "Show details"`),
    {
      label: "wait for text",
      krometrail: { name: "wait", args: { text: "Details are visible" } },
      playwright: [{ name: "browser_wait_for", args: { text: "Details are visible" } }],
      devtools: [{ name: "wait_for", args: { pageId, text: ["Details are visible"] } }],
    },
    {
      label: "fill name",
      krometrail: { name: "fill", args: { selector: "#name", value: "Grace" } },
      playwright: [{ name: "browser_type", args: { element: "name", target: "#name", text: "Grace" } }],
      devtools: dtFill(`textbox "Name"`, "Grace"),
    },
    {
      label: "press Enter",
      krometrail: { name: "press_keys", args: { keys: "Enter" } },
      playwright: [{ name: "browser_press_key", args: { key: "Enter" } }],
      devtools: dtKey("Enter"),
    },
    {
      label: "go back",
      krometrail: { name: "go_back", args: {} },
      playwright: [{ name: "browser_navigate_back", args: {} }],
      devtools: [{ name: "navigate_page", args: { pageId, type: "back" } }],
    },
  ];
}

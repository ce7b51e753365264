import { cdpMessage } from "./cdp.ts";
import type { PageTarget } from "./targets.ts";
import { ToolError } from "../errors.ts";

/** Text bound for both directions (characters). */
export const CLIPBOARD_TEXT_LIMIT = 100_000;
const CLIPBOARD_TIMEOUT_MS = 5_000;

function unavailable(page: PageTarget, why: string, recovery: string): ToolError {
  return new ToolError({
    code: "clipboard_unavailable",
    message: `The clipboard of ${page.id} is not available: ${why.slice(0, 300)}`,
    retry: "after_recovery",
    recovery,
    affected: { page_id: page.id },
  });
}

/** The origin clipboard permissions are granted to; opaque documents have none to grant. */
async function pageOrigin(page: PageTarget): Promise<string> {
  const r = await page.send("Runtime.evaluate", { expression: "self.origin", returnByValue: true }, 2_000)
    .catch(() => undefined);
  // No answer is a busy page, not an opaque one: say so rather than blame the document's origin.
  if (!r) {
    throw unavailable(
      page,
      "the page did not answer within 2 s (its main thread may be busy in script).",
      "Check browser_status; if the page stays unresponsive, navigate_page to about:blank or close_page.",
    );
  }
  const origin = r.result.value;
  if (typeof origin !== "string" || origin === "null" || !/^[a-z][a-z0-9+.-]*:\/\//i.test(origin)) {
    throw unavailable(
      page,
      "the document has an opaque origin (about:blank, data: or a sandbox), which cannot hold clipboard permission.",
      "navigate_page to an http(s) or file page first, then retry.",
    );
  }
  return origin;
}

/**
 * Runs a clipboard expression in the page with the permissions granted and the document focused.
 * A page that lacks focus gets focus emulation for the duration only: that never switches Chrome's
 * visible tab, so the preserve focus policy holds (no activateTarget or bringToFront here).
 */
async function withClipboard<T>(page: PageTarget, expression: string): Promise<T> {
  const origin = await pageOrigin(page);
  await page.send("Browser.grantPermissions", {
    permissions: ["clipboardReadWrite", "clipboardSanitizedWrite"],
    origin,
  }).catch((err) => {
    throw unavailable(
      page,
      `permission grant refused (${cdpMessage(err)})`,
      "Retry; if it persists, restart the browser.",
    );
  });
  const focus = await page.send("Runtime.evaluate", {
    expression: "document.hasFocus()",
    returnByValue: true,
  });
  const emulate = focus.result.value !== true;
  if (emulate) await page.send("Emulation.setFocusEmulationEnabled", { enabled: true });
  try {
    const r = await page.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
      userGesture: true,
      timeout: CLIPBOARD_TIMEOUT_MS,
    }, CLIPBOARD_TIMEOUT_MS + 1_000);
    if (r.exceptionDetails) {
      const text = r.exceptionDetails.exception?.description ?? r.exceptionDetails.text;
      throw unavailable(
        page,
        text.split("\n")[0],
        "Make sure the page is a secure context (https, localhost or file), then retry; activate_page if it needs real focus.",
      );
    }
    return r.result.value as T;
  } finally {
    if (emulate) await page.send("Emulation.setFocusEmulationEnabled", { enabled: false }).catch(() => {});
  }
}

export interface ClipboardText {
  text: string;
  /** Characters on the clipboard (may exceed the returned text). */
  length: number;
  truncated: boolean;
}

export async function readClipboard(page: PageTarget): Promise<ClipboardText> {
  const value = await withClipboard<{ text: string; length: number }>(
    page,
    `navigator.clipboard.readText().then((t) => ({ text: t.slice(0, ${CLIPBOARD_TEXT_LIMIT}), length: t.length }))`,
  );
  return { text: value.text, length: value.length, truncated: value.length > value.text.length };
}

export interface ClipboardWrite {
  /** The text read back equals the text written. */
  confirmed: boolean;
  chars: number;
  read_back_chars?: number;
}

/** Writes text, then reads it back: the write is confirmed only when the clipboard holds it. */
export async function writeClipboard(page: PageTarget, text: string): Promise<ClipboardWrite> {
  const value = await withClipboard<{ same: boolean; length: number | null }>(
    page,
    `(async (text) => {
      await navigator.clipboard.writeText(text);
      const back = await navigator.clipboard.readText().catch(() => null);
      return { same: back === text, length: back === null ? null : back.length };
    })(${JSON.stringify(text)})`,
  );
  return {
    confirmed: value.same,
    chars: text.length,
    ...(value.length !== null ? { read_back_chars: value.length } : {}),
  };
}

/**
 * activate_page: the one deliberate exception to the preserve focus policy (the policy itself is
 * unchanged). Foregrounds the target and waits boundedly for a visible document; a page that stays
 * hidden fails as target_hidden. Focus lives here beside the clipboard, which is what needs it.
 */
export async function activatePage(page: PageTarget): Promise<void> {
  await page.send("Target.activateTarget", { targetId: page.targetId }).catch(() => {});
  await page.send("Page.bringToFront").catch(() => {});
  for (let i = 0; i < 50 && !(await page.visible()); i++) await new Promise((r) => setTimeout(r, 20));
  if (await page.visible()) return;
  throw new ToolError({
    code: "target_hidden",
    message: `Page ${page.id} stayed in the background after activation; nothing was dispatched.`,
    retry: "safe",
    recovery: "Retry activate_page; if it persists, check browser_status (the window may be minimized).",
    affected: { page_id: page.id },
  });
}

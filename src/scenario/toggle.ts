/** Reads a checkbox's state for check/uncheck, through the same targeting as every action. */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { releaseTargeting, resolveTarget } from "../control/targeting.ts";
import type { Locator } from "../snapshot/locator.ts";
import { ToolError } from "../errors.ts";

export async function readChecked(
  session: BrowserSession,
  page: PageTarget,
  target: { locator?: Record<string, unknown>; selector?: string },
): Promise<boolean> {
  const resolved = await resolveTarget(
    session,
    { locator: target.locator as Locator | undefined, selector: target.selector },
    page.id,
  );
  try {
    if (resolved.kind !== "element") throw notCheckable("a point");
    const r = await page.send("Runtime.callFunctionOn", {
      objectId: resolved.objectId,
      // A label or wrapper names its control; aria-checked covers custom switches.
      functionDeclaration: `function() {
        const el = this.control || (this.matches('input') ? this : this.querySelector('input[type=checkbox],input[type=radio]')) || this;
        if ('checked' in el && (el.type === 'checkbox' || el.type === 'radio')) return el.checked;
        const aria = el.getAttribute && el.getAttribute('aria-checked');
        return aria === null ? null : aria === 'true';
      }`,
      returnByValue: true,
    });
    const value = r.result.value;
    if (typeof value !== "boolean") {
      throw notCheckable("an element that is neither a checkbox, a radio nor aria-checked");
    }
    return value;
  } finally {
    releaseTargeting(page);
  }
}

function notCheckable(what: string): ToolError {
  return new ToolError({
    code: "target_not_checkable",
    message: `check/uncheck needs a checkbox, radio or aria-checked control; the target is ${what}.`,
    retry: "never",
    recovery: "Target the checkbox (or its label) itself, or use click.",
  });
}

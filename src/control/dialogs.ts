import { ToolError } from "../errors.ts";
import { type ActionEnv, interact } from "./interaction.ts";

export async function handleDialog(
  env: ActionEnv,
  accept: boolean,
  promptText: string | undefined,
  pageId?: string,
) {
  const page = env.session.page(pageId);
  const dialog = page.dialog;
  if (!dialog) {
    throw new ToolError({
      code: "dialog_not_found",
      message: `No JavaScript dialog is open on ${page.id}.`,
      retry: "never",
      recovery: "Nothing to handle; check browser_status, which names pages with open dialogs.",
      affected: { page_id: page.id },
    });
  }
  const params = {
    accept,
    dialog_type: dialog.type,
    ...(promptText !== undefined ? { prompt_text_length: promptText.length } : {}),
  };
  const observation = await interact(env, page, "handle_dialog", params, async () => {
    await page.send("Page.handleJavaScriptDialog", {
      accept,
      ...(promptText !== undefined ? { promptText } : {}),
    });
    page.setDialog(undefined);
  });
  observation.structured.handled_dialog = { type: dialog.type, message: dialog.message, accepted: accept };
  return observation;
}

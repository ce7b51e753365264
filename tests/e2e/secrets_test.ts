import { assert, assertEquals, assertMatch } from "../assert.ts";
import { join } from "node:path";
import {
  e2e,
  errorCode,
  fixtures,
  REPO_ROOT,
  startServer,
  structured,
  textOf,
  withServer,
} from "./harness.ts";
import { grepSecrets } from "./secrets_util.ts";

/**
 * Issue 11 item 5: secrets planted in navigation URLs and console calls must not reach any file
 * krometrail writes. Chrome's own profile (profiles/<name>, under the same data dir) keeps real
 * URLs in its history and session files; it is Chrome's store, named and excluded.
 */
const NAV_SECRETS = ["uiPass-K7q1", "qTok-K7q2", "frag-K7q3", "newp-K7q4"];
const PAGE_SECRETS = ["rplTok-K7q5", "rplFrag-K7q6", "pushKey-K7q7", "pushFrag-K7q8"];
const CONSOLE_SECRETS = [
  "conarg-K7q9",
  "sunflowermeadow",
  "pwis-K7qA",
  "pwsp-K7qB",
  "pwcolon-K7qC",
  "fetchTok-K7qD",
];
const SECRETS = [...NAV_SECRETS, ...PAGE_SECRETS, ...CONSOLE_SECRETS];

async function exited(pid: number | null): Promise<void> {
  for (let i = 0; pid !== null && i < 200; i++) {
    try {
      await Deno.stat(`/proc/${pid}`);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name: "no planted secret from navigation URLs or console calls reaches krometrail's files",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-secrets-" });
    const server = await startServer({ dataDir });
    try {
      const started = await server.call("start_browser", {});
      assert(!started.isError, textOf(started));
      const host = site.origin.replace("http://", "");
      const secretUrl =
        `http://alice:uiPass-K7q1@${host}/secrets_planted.html?token=qTok-K7q2&user=bob#access_token=frag-K7q3`;
      const nav = await server.call("navigate_page", { url: secretUrl, detail: "expanded" });
      const navOut = structured(nav);
      assertEquals(navOut.status, "ok", textOf(nav));
      // The echo says what the stored record lost; the browser still went to the real URL.
      assertEquals(navOut.url_redacted, ["userinfo", "path", "query", "fragment"]);
      assertMatch(textOf(nav), /recorded URL keeps no userinfo, query values, fragment/);
      const echo = JSON.stringify(navOut.interaction);
      for (const s of NAV_SECRETS) assert(!echo.includes(s), `interaction echo holds ${s}: ${echo}`);
      const live = await server.call("evaluate_page", { expression: "location.search + location.hash" });
      assertMatch(textOf(live), /qTok-K7q2.*frag-K7q3/);

      for (const id of ["#noise", "#push", "#replace"]) {
        const clicked = await server.call("click", { selector: id });
        assertEquals(structured(clicked).status, "ok", textOf(clicked));
      }
      const back = await server.call("go_back", {});
      assert(!back.isError, textOf(back));
      const created = await server.call("create_page", {
        url: `${site.origin}/secrets_planted.html?token=newp-K7q4`,
      });
      assert(!created.isError, textOf(created));
      const events = await server.call("query_browser_events", { kinds: ["console"] });
      const consoleText = JSON.stringify(structured(events));
      for (const s of CONSOLE_SECRETS) assert(!consoleText.includes(s), `console events hold ${s}`);

      // A relative upload path names no base the caller chose: refused, not resolved against cwd.
      const relative = await server.call("upload_files", { selector: "#noise", paths: ["files/report.csv"] });
      assertEquals(errorCode(relative), "upload_path_relative", textOf(relative));
      assertMatch(textOf(relative), /KROMETRAIL_UPLOAD_ROOT/);

      const stopped = await server.call("stop_browser", {});
      assert(!stopped.isError, textOf(stopped));
    } finally {
      await server.close();
      await exited(server.pid);
      await site.close();
    }
    try {
      const profiles = join(dataDir, "profiles");
      const ours = await grepSecrets(dataDir, SECRETS, [profiles]);
      const chrome = await grepSecrets(profiles, SECRETS);
      const chromeFiles = [...new Set(chrome.hits.map((h) => h.file))];
      const chromeSecrets = SECRETS.filter((secret) => chrome.hits.some((h) => h.secret === secret));
      console.error(
        `secrets scan: ${ours.hits.length} hits in ${ours.files} krometrail files (${ours.bytes} bytes); ` +
          `Chrome's profile (not ours): ${chromeSecrets.length} of ${SECRETS.length} secrets in ` +
          `${chromeFiles.length} of ${chrome.files} files (${chromeFiles.slice(0, 8).join(", ")}): ` +
          chromeSecrets.join(" "),
      );
      assertEquals(ours.hits, [], "planted secrets in krometrail's own files");
      assert(ours.files > 0, "the scan saw krometrail's files");
    } finally {
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "authority: KROMETRAIL_ALLOW_FILE_URLS=0 refuses file://; relative uploads resolve against KROMETRAIL_UPLOAD_ROOT",
  ...e2e,
  fn: async () => {
    const uploadRoot = await Deno.makeTempDir({ prefix: "krometrail-upload-root-" });
    await Deno.writeTextFile(join(uploadRoot, "relative.txt"), "from the upload root");
    try {
      await withServer(async (server, site) => {
        const fileUrl = `file://${REPO_ROOT}fixtures/site/form.html`;
        for (
          const [tool, args] of [
            ["navigate_page", { url: fileUrl }],
            ["create_page", { url: fileUrl }],
            ["start_browser", { url: fileUrl, temporary: true }],
          ] as const
        ) {
          const refused = await server.call(tool, args);
          assertEquals(errorCode(refused), "file_urls_disabled", `${tool}: ${textOf(refused)}`);
          assertMatch(textOf(refused), /KROMETRAIL_ALLOW_FILE_URLS=0/);
          assertEquals((structured(refused).error as { retry: string }).retry, "never");
        }
        const pages = structured(await server.call("list_pages", {})).pages as unknown[];
        assertEquals(pages.length, 1, "create_page opened nothing");

        await server.call("navigate_page", { url: `${site.origin}/form.html` });
        const uploaded = await server.call("upload_files", { selector: "#avatar", paths: ["relative.txt"] });
        assertEquals(structured(uploaded).status, "ok", textOf(uploaded));
        const text = await server.call("evaluate_page", {
          expression: "document.getElementById('avatar').files[0].text()",
        });
        assertMatch(textOf(text), /from the upload root/);
      }, {
        browser: {},
        env: { KROMETRAIL_ALLOW_FILE_URLS: "0", KROMETRAIL_UPLOAD_ROOT: uploadRoot },
      });
    } finally {
      await Deno.remove(uploadRoot, { recursive: true }).catch(() => {});
    }
  },
});

import { assert, assertEquals } from "../../assert.ts";
import { SERVER_PERMISSIONS } from "../../../build.ts";
import {
  CHECKOUT_PERMISSIONS,
  commandLine,
  detectInstallation,
  type InstallationProbe,
  mcpLaunch,
  mcpServersJson,
  mcpSnippet,
  shellQuote,
} from "../../../src/cli/mcp_snippet.ts";

const probe = (over: Partial<InstallationProbe>): InstallationProbe => ({
  standalone: false,
  execPath: "/home/me/.deno/bin/deno",
  npm: false,
  repoDir: "/src/krometrail",
  mainPath: "/src/krometrail/main.ts",
  ...over,
});

/** Splits a POSIX command line of bare and single-quoted words (what shellQuote produces). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === "\\") {
      word += line[++i];
      inWord = true;
    } else if (c === " ") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

Deno.test("the checkout runs under exactly the compiled binary's permissions (build.ts)", () => {
  assertEquals([...CHECKOUT_PERMISSIONS], [...SERVER_PERMISSIONS]);
});

Deno.test("the installation is told apart: npm wrapper, compiled binary, deno checkout", () => {
  assertEquals(detectInstallation(probe({ npm: true, standalone: true })).kind, "npm");
  assertEquals(detectInstallation(probe({ standalone: true, execPath: "/opt/krometrail" })), {
    kind: "binary",
    execPath: "/opt/krometrail",
  });
  // A binary renamed or copied still is one when Deno.build.standalone is missing.
  assertEquals(detectInstallation(probe({ execPath: "/usr/local/bin/krometrail" })).kind, "binary");
  assertEquals(detectInstallation(probe({})).kind, "checkout");
  assertEquals(detectInstallation(probe({ execPath: "C:\\deno\\deno.exe" })).kind, "checkout");
});

Deno.test("each installation's launch command", () => {
  assertEquals(mcpLaunch({ kind: "binary", execPath: "/opt/krometrail" }), {
    command: "/opt/krometrail",
    args: ["mcp"],
  });
  assertEquals(mcpLaunch({ kind: "npm" }), { command: "npx", args: ["-y", "krometrail", "mcp"] });
  const checkout = mcpLaunch(detectInstallation(probe({})));
  assertEquals(checkout.command, "/home/me/.deno/bin/deno");
  assertEquals(checkout.args, [
    "run",
    "--quiet",
    "--frozen",
    ...SERVER_PERMISSIONS,
    "/src/krometrail/main.ts",
    "mcp",
  ]);
});

Deno.test("the mcpServers JSON is what Claude Code and Cursor read", () => {
  const launch = { command: "npx", args: ["-y", "krometrail", "mcp"] };
  const parsed = JSON.parse(mcpServersJson(launch));
  assertEquals(parsed, { mcpServers: { krometrail: { command: "npx", args: ["-y", "krometrail", "mcp"] } } });
});

Deno.test("shell quoting leaves safe words bare and quotes globs, spaces and quotes", () => {
  assertEquals(shellQuote("--allow-read"), "--allow-read");
  assertEquals(shellQuote("/usr/bin/x"), "/usr/bin/x");
  // zsh would glob [::1] unquoted.
  assertEquals(
    shellQuote("--allow-net=127.0.0.1,localhost,[::1]"),
    "'--allow-net=127.0.0.1,localhost,[::1]'",
  );
  assertEquals(shellQuote("/Users/me/My Tools/deno"), "'/Users/me/My Tools/deno'");
  assertEquals(shellQuote("it's"), "'it'\\''s'");
  assertEquals(shellQuote(""), "''");
});

Deno.test("the claude and codex one-liners run the same command as the JSON", () => {
  for (
    const inst of [
      detectInstallation(probe({ execPath: "/Users/me/My Tools/deno", mainPath: "/Users/me/it's/main.ts" })),
      detectInstallation(probe({ npm: true })),
      detectInstallation(probe({ standalone: true, execPath: "/opt/krometrail" })),
    ]
  ) {
    const s = mcpSnippet(inst);
    const json = JSON.parse(s.mcp_servers_json).mcpServers.krometrail;
    for (const [cli, line] of [["claude", s.claude_add], ["codex", s.codex_add]] as const) {
      const prefix = `${cli} mcp add krometrail -- `;
      assert(line.startsWith(prefix), line);
      assertEquals(shellWords(line.slice(prefix.length)), [json.command, ...json.args], line);
    }
    assertEquals(commandLine(s.launch), s.claude_add.slice("claude mcp add krometrail -- ".length));
  }
});

Deno.test("a checkout also offers its start task; the other forms do not", () => {
  const checkout = mcpSnippet(detectInstallation(probe({})));
  assertEquals(checkout.installation, "checkout");
  assertEquals(checkout.alternative?.launch.args, ["task", "--quiet", "--cwd", "/src/krometrail", "start"]);
  assert(checkout.description.includes("/src/krometrail"));
  assertEquals(mcpSnippet({ kind: "npm" }).alternative, undefined);
  assertEquals(mcpSnippet({ kind: "binary", execPath: "/opt/k" }).description, "compiled binary /opt/k");
});

import { launchChrome } from "/work/main/src/browser/launch.ts";
import { CdpConnection } from "/work/main/src/browser/cdp.ts";
import { serveStatic } from "/work/main/src/demo/static_server.ts";
const site = serveStatic();
const dir = await Deno.makeTempDir();
const chrome = await launchChrome({ executable: "/usr/bin/chromium", userDataDir: dir, profileLabel: "x", headless: true, temporary: true });
const c = await CdpConnection.connect(chrome.browserWsUrl);
const { targetId } = await c.send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await c.send("Target.attachToTarget", { targetId, flatten: true });
const s = (m: any, p: any = {}) => c.send(m, p, sessionId);
await s("Page.enable"); await s("Runtime.enable");
await s("Page.navigate", { url: `${site.origin}/heavy.html` });
await new Promise((r) => setTimeout(r, 1500));
async function time(label: string, f: () => Promise<unknown>, n = 8) {
  const t: number[] = [];
  for (let i = 0; i < n; i++) { const t0 = performance.now(); await f(); t.push(performance.now() - t0); }
  t.sort((a, b) => a - b); console.log(label, t.map((x) => x.toFixed(0)).join(" "), "median", t[n >> 1].toFixed(1));
}
const mode = Deno.args[0] ?? "";
if (mode.includes("screencast")) { c.on?.("Page.screencastFrame", (p: any, sid: string) => c.send("Page.screencastFrameAck", { sessionId: p.sessionId }, sid).catch(()=>{})); await s("Page.startScreencast", { format: "jpeg", quality: 60, everyNthFrame: 1 }); }
const doc: any = await s("DOM.getDocument", { depth: -1 });
const btn: any = await s("DOM.querySelector", { nodeId: doc.root.nodeId, selector: "button" });
const desc: any = await s("DOM.describeNode", { nodeId: btn.nodeId });
const bid = desc.node.backendNodeId;
await time("partial no-enable", () => s("Accessibility.getPartialAXTree", { backendNodeId: bid, fetchRelatives: false }));
await time("full no-enable", () => s("Accessibility.getFullAXTree"));
const r: any = await s("Accessibility.getFullAXTree"); console.log("nodes", r.nodes.length, "json", JSON.stringify(r).length);
await s("Accessibility.enable");
await time("full enabled", () => s("Accessibility.getFullAXTree"));
await time("partial enabled", () => s("Accessibility.getPartialAXTree", { backendNodeId: bid, fetchRelatives: false }));
await time("dirty+partial enabled", async () => { await s("Runtime.evaluate", { expression: "document.querySelector('input').value += 'x'; document.body.offsetHeight" }); await s("Accessibility.getPartialAXTree", { backendNodeId: bid, fetchRelatives: false }); });
await s("Accessibility.disable");
await time("dirty+partial disabled", async () => { await s("Runtime.evaluate", { expression: "document.querySelector('input').value += 'x'; document.body.offsetHeight" }); await s("Accessibility.getPartialAXTree", { backendNodeId: bid, fetchRelatives: false }); });
const full: any = await s("Accessibility.getFullAXTree");
const n0 = full.nodes[100]; console.log(JSON.stringify(n0).slice(0,1500));
let srcChars = 0, propChars = 0; for (const n of full.nodes) { srcChars += JSON.stringify(n.name?.sources ?? []).length; propChars += JSON.stringify(n.properties ?? []).length; }
console.log("sources chars", srcChars, "properties chars", propChars);
await time("evaluate 1", () => s("Runtime.evaluate", { expression: "1" }));
await time("rAF", () => s("Runtime.evaluate", { expression: "new Promise(r=>requestAnimationFrame(()=>r(1)))", awaitPromise: true }));
await chrome.terminate(); await site.close(); Deno.exit(0);

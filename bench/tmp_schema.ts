import { buildCatalogue, describeTool } from "../src/mcp/registry.ts";
const tools = buildCatalogue({ "temporal-video": { available: true } }).tools.map(describeTool);
let sum = 0;
for (const t of tools) { const n = JSON.stringify(t).length; sum += n; if (n > 900) console.log(t.name, n); }
console.log("tools", tools.length, "mean", Math.round(sum / tools.length));

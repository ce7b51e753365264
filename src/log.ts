import { configure, getLogger, getStreamSink, type Logger } from "@logtape/logtape";

let configured = false;

/** All logs go to stderr: stdout belongs to the MCP transport. */
export async function setupLogging(level: "debug" | "info" | "warning" | "error"): Promise<void> {
  if (configured) return;
  configured = true;
  await configure({
    sinks: { stderr: getStreamSink(Deno.stderr.writable) },
    loggers: [
      { category: ["krometrail"], lowestLevel: level, sinks: ["stderr"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["stderr"] },
    ],
  });
}

export function logger(...category: string[]): Logger {
  return getLogger(["krometrail", ...category]);
}

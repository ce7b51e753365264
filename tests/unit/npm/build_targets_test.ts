import { assertEquals } from "../../assert.ts";
import { denortTarget, RELEASE_TARGETS } from "../../../build.ts";

/** A 64-byte executable header: ELF64 LE with e_machine, or Mach-O 64 with cputype. */
function elf(machine: number): Uint8Array {
  const h = new Uint8Array(64);
  h.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
  new DataView(h.buffer).setUint16(18, machine, true);
  return h;
}
function macho(cpu: number): Uint8Array {
  const h = new Uint8Array(64);
  const view = new DataView(h.buffer);
  view.setUint32(0, 0xfeedfacf, true);
  view.setUint32(4, cpu, true);
  return h;
}

Deno.test("build targets: linux and macOS, x64 and arm64", () => {
  assertEquals([...RELEASE_TARGETS].sort(), [
    "aarch64-apple-darwin",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "x86_64-unknown-linux-gnu",
  ]);
});

Deno.test("build targets: a denort's header names the one target it fits", () => {
  assertEquals(denortTarget(elf(62)), "x86_64-unknown-linux-gnu");
  assertEquals(denortTarget(elf(183)), "aarch64-unknown-linux-gnu");
  assertEquals(denortTarget(macho(0x01000007)), "x86_64-apple-darwin");
  assertEquals(denortTarget(macho(0x0100000c)), "aarch64-apple-darwin");
  assertEquals(denortTarget(elf(40)), undefined, "32-bit ARM is no release target");
  assertEquals(denortTarget(new TextEncoder().encode("MZ this is a windows executable....")), undefined);
  assertEquals(denortTarget(new Uint8Array(4)), undefined, "too short to be an executable");
});

Deno.test("build targets: the running deno's own header reads as the host target", async () => {
  const file = await Deno.open(Deno.execPath());
  const header = new Uint8Array(64);
  const n = await file.read(header);
  file.close();
  const host = (RELEASE_TARGETS as readonly string[]).includes(Deno.build.target)
    ? Deno.build.target
    : undefined;
  assertEquals(denortTarget(header.subarray(0, n ?? 0)), host);
});

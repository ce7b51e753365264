/** `krometrail doctor` (stub). Runs without an AppContext: it must diagnose what stops one opening. */
export function doctorCommand(_args: string[]): Promise<number> {
  console.error("krometrail doctor: not built yet");
  return Promise.resolve(1);
}

/**
 * One page's Network.emulateNetworkConditionsByRule list, composed from every owner that needs one.
 * Chrome keeps a single list per page and each call replaces it, so the scenario guard's WebSocket
 * boundary (origins taken offline) and a page-wide emulation (emulate's throttling or offline) would
 * erase each other if each sent its own. Instead both live in the page's overrides (re-applied on a
 * same-target reattachment) as NetworkRuleSources, and whoever changes sends the composition:
 *
 * - restrictions first, in override order: the first matching entry wins, so a blocked origin stays
 *   offline whatever the page-wide conditions are;
 * - a pass entry among them (online, unthrottled: an allowed origin the guard lists so the blocking
 *   catch-alls after it do not match) takes the page-wide conditions instead, or it would exempt the
 *   allowed origins, which are the app under test, from the throttling;
 * - the page-wide conditions last, as the global entry (empty pattern: every request, p2p included).
 */
import type { Protocol } from "devtools-protocol";
import type { PageTarget, TargetOverride } from "./targets.ts";

export type NetworkRule = Protocol.Network.NetworkConditions;

/** Page-wide conditions, in CDP units (ms, bytes per second, -1 for no throttling). */
export interface NetworkThrottle {
  offline: boolean;
  latency: number;
  downloadThroughput: number;
  uploadThroughput: number;
}

/** An override that contributes to the page's rule list. */
export interface NetworkRuleSource extends TargetOverride {
  /** Entries that must win over page-wide conditions (empty when it does not hold this page). */
  networkRestrictions?(page: PageTarget): NetworkRule[];
  /** Page-wide conditions; the last source that has some wins. */
  networkConditions?(page: PageTarget): NetworkThrottle | undefined;
}

function isRuleSource(o: TargetOverride): o is NetworkRuleSource {
  return "networkRestrictions" in o || "networkConditions" in o;
}

/** An entry that neither blocks nor throttles: it only exempts what it matches from later entries. */
export function isPassRule(r: NetworkRule): boolean {
  return !r.offline && r.latency === 0 && r.downloadThroughput < 0 && r.uploadThroughput < 0;
}

/** The composed list (pure): restrictions with their pass entries throttled, then the global entry. */
export function composeRules(
  restrictions: readonly NetworkRule[],
  conditions?: NetworkThrottle,
): NetworkRule[] {
  if (!conditions) return restrictions.map((r) => ({ ...r }));
  return [
    ...restrictions.map((r) => isPassRule(r) ? { ...r, ...conditions } : { ...r }),
    { urlPattern: "", ...conditions },
  ];
}

/** The rule list the page's current overrides call for. */
export function pageNetworkRules(page: PageTarget): NetworkRule[] {
  const restrictions: NetworkRule[] = [];
  let conditions: NetworkThrottle | undefined;
  for (const o of page.overrides.values()) {
    if (!isRuleSource(o)) continue;
    restrictions.push(...(o.networkRestrictions?.(page) ?? []));
    conditions = o.networkConditions?.(page) ?? conditions;
  }
  return composeRules(restrictions, conditions);
}

/** Sends the page's composed list (after an owner changed its part in page.overrides). */
export function sendNetworkRules(page: PageTarget, timeoutMs?: number): Promise<unknown> {
  return page.send(
    "Network.emulateNetworkConditionsByRule",
    { matchedNetworkConditions: pageNetworkRules(page) },
    timeoutMs,
  );
}

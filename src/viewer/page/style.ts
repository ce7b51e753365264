/** The viewer's style sheet: dark neutral, the frame large, the timeline a strip of colored ticks. */
export const STYLE_CSS = `
:root {
  --bg: #1e1e1e; --panel: #252526; --panel2: #2d2d30; --line: #3c3c3c; --text: #d4d4d4; --muted: #8b8b8b;
  --accent: #4fc1ff; --interaction: #3794ff; --navigation: #4ec9b0; --error: #f14c4c;
  --request-failed: #d18616; --gap: #6a6a6a; --marker: #e2c541; --mark: #ff5fd2; --frame: #9aa0a6;
  --human: #ff8ad8; --ask: #ffb454;
  color-scheme: dark;
}
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; background: var(--bg); color: var(--text);
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
button { font: inherit; color: var(--text); background: var(--panel2); border: 1px solid var(--line);
  border-radius: 4px; padding: 3px 10px; cursor: pointer; }
button:hover:not(:disabled) { border-color: var(--accent); }
button:disabled { opacity: .5; cursor: default; }
button.primary { background: #0e639c; border-color: #1177bb; }
button.ghost { background: transparent; }
.muted { color: var(--muted); }
.spacer { flex: 1; }
.time { font-variant-numeric: tabular-nums; font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
h2 .muted { text-transform: none; letter-spacing: 0; font-weight: 400; }
h2 { font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 12px 0 6px;
  font-weight: 600; }
#topbar { height: 36px; display: flex; align-items: center; gap: 10px; padding: 0 12px; white-space: nowrap;
  background: var(--panel); border-bottom: 1px solid var(--line); overflow: hidden; }
#session-title { overflow: hidden; text-overflow: ellipsis; min-width: 0; }
.brand { font-weight: 700; color: var(--accent); }
.brand-sub { color: var(--muted); }
.keys { font-size: 11px; }
.badge { font-size: 11px; padding: 1px 7px; border-radius: 9px; }
.badge.live { background: #5a1d1d; color: #ff9b9b; }
.badge.ask { background: #4d3800; color: var(--ask); font-weight: 600; }
#layout { display: grid; grid-template-columns: 230px minmax(0, 1fr) 330px; height: calc(100% - 36px); }
#sidebar, #inspector { background: var(--panel); overflow-y: auto; padding: 0 10px 12px; }
#sidebar { border-right: 1px solid var(--line); }
#inspector { border-left: 1px solid var(--line); }
#sessions .session { border: 1px solid transparent; border-radius: 4px; padding: 5px 6px; margin-bottom: 4px;
  cursor: pointer; }
#sessions .session:hover { background: var(--panel2); }
#sessions .session.selected { border-color: var(--accent); background: #04395e55; }
#sessions .session .when { font-size: 11px; color: var(--muted); }
#sessions .session .when b { color: var(--text); font-size: 13px; font-weight: 600; }
#sessions .session .when .badge { margin-left: 4px; }
#sessions .session .sid { font: 10px/1.3 ui-monospace, Menlo, Consolas, monospace; color: var(--muted);
  word-break: break-all; margin: 2px 0; }
#sessions .page { display: block; width: 100%; text-align: left; margin-top: 3px; padding: 2px 6px; font-size: 12px;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; background: transparent; border-color: var(--line); }
#sessions .page.selected { border-color: var(--accent); color: #fff; }
#actions { list-style: none; margin: 0; padding: 0; }
#actions li { padding: 3px 6px; border-radius: 3px; cursor: pointer; display: flex; gap: 6px; font-size: 12px; }
#actions li:hover { background: var(--panel2); }
#actions li.current { background: #04395e; }
#actions li .t { color: var(--muted); margin-left: auto; }
#actions li.failed .op { color: var(--error); }
#center { display: flex; flex-direction: column; min-width: 0; padding: 10px 12px; gap: 8px; }
#question { border: 2px solid var(--ask); background: #2b2414; border-radius: 6px; padding: 10px 12px; }
#question[hidden] { display: none; }
.question-head { display: flex; gap: 10px; align-items: center; }
#question-text { font-size: 16px; margin: 8px 0; color: #fff; }
#question-choices { display: flex; flex-wrap: wrap; gap: 8px; }
#question-choices .choice { font-size: 14px; padding: 6px 16px; background: #3a2f12; border-color: var(--ask); }
#question-choices .choice:hover:not(:disabled) { background: #57461a; }
.question-foot { display: flex; gap: 10px; align-items: center; margin-top: 8px; }
#question-status { font-weight: 600; color: var(--ask); }
#stage { flex: 1; min-height: 0; display: flex; align-items: center; justify-content: center; background: #111;
  border: 1px solid var(--line); border-radius: 4px; overflow: hidden; }
#frame { max-width: 100%; max-height: 100%; object-fit: contain; box-shadow: 0 0 0 1px #000, 0 4px 18px #000a; }
#playbar { display: flex; align-items: center; gap: 8px; }
#playhead-time { min-width: 92px; color: #fff; font-size: 14px; }
#scrubber { flex: 1; accent-color: var(--accent); }
#filmstrip { display: flex; gap: 4px; height: 46px; overflow: hidden; }
#filmstrip .thumb { height: 46px; flex: 1 1 0; min-width: 0; object-fit: cover; object-position: top; border-radius: 3px;
  border: 1px solid var(--line); cursor: pointer; opacity: .75; background: #111; }
#filmstrip .thumb:hover { opacity: 1; }
#filmstrip .thumb.current { opacity: 1; border-color: var(--accent); }
#timeline { position: relative; height: 74px; background: #181818; border: 1px solid var(--line);
  border-radius: 4px; cursor: crosshair; overflow: hidden; outline: none; user-select: none; }
#timeline:focus-visible { border-color: var(--accent); }
#timeline > * { position: absolute; }
.tick-frame { top: 4px; height: 12px; width: 1px; background: var(--frame); opacity: .8; pointer-events: none; }
.tick-frame.density { opacity: 1; }
.tick-gap { top: 0; bottom: 0; min-width: 2px; background: repeating-linear-gradient(45deg, #0000 0 4px, #6a6a6a55 4px 8px); }
.tick-interaction { top: 22px; height: 12px; min-width: 4px; background: var(--interaction); border-radius: 2px;
  cursor: pointer; }
.tick-interaction:hover, .tick-interaction.current { outline: 2px solid #fff; z-index: 3; }
.tick-interaction.failed { background: var(--error); }
.tick-navigation, .tick-error, .tick-request-failed, .tick-dialog { top: 42px; height: 12px; width: 3px;
  border-radius: 1px; }
.tick-navigation { background: var(--navigation); }
.tick-error { background: var(--error); }
.tick-request-failed { background: var(--request-failed); top: 46px; }
.tick-dialog { background: #c586c0; }
.tick-marker { top: 58px; width: 0; height: 0; border-left: 6px solid transparent; border-right: 6px solid transparent;
  border-bottom: 11px solid var(--marker); margin-left: -6px; }
.tick-marker.human { border-bottom-color: var(--human); }
.tick-mark { top: 0; bottom: 0; width: 2px; background: var(--mark); box-shadow: 0 0 6px var(--mark); z-index: 4;
  pointer-events: none; }
.range-selection { top: 0; bottom: 0; background: #4fc1ff22; border-left: 1px solid var(--accent);
  border-right: 1px solid var(--accent); pointer-events: none; }
.hover-line { top: 0; bottom: 0; width: 1px; background: #ffffff55; z-index: 4; pointer-events: none; }
.hover-line span { position: absolute; top: 2px; left: 4px; font-size: 10px; color: #fff; background: #000c;
  padding: 0 3px; border-radius: 2px; white-space: nowrap; }
.hover-line.flip span { left: auto; right: 4px; }
#playhead-line { top: 0; bottom: 0; width: 2px; margin-left: -1px; background: #fff; z-index: 5; pointer-events: none; }
#axis { position: relative; height: 14px; font-size: 10px; color: var(--muted); margin-top: -6px; }
#axis span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
#legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 11px; color: var(--muted); }
.key::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px;
  vertical-align: -1px; }
.k-frame::before { background: var(--frame); } .k-interaction::before { background: var(--interaction); }
.k-navigation::before { background: var(--navigation); } .k-error::before { background: var(--error); }
.k-request-failed::before { background: var(--request-failed); } .k-gap::before { background: var(--gap); }
.k-marker::before { background: var(--marker); } .k-mark::before { background: var(--mark); }
.panel { border-bottom: 1px solid var(--line); padding-bottom: 10px; }
.row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
#artifact-images figure { margin: 10px 0 0; }
#artifact-images figure[hidden] { display: none; }
#artifact-images figcaption { font-size: 11px; color: var(--muted); margin-bottom: 3px; }
#artifact-images img, #artifact-images video { width: 100%; border: 1px solid var(--line); border-radius: 3px; background: #111; }
#artifacts-status { margin: 8px 0 0; font-size: 12px; }
#events { list-style: none; margin: 0; padding: 0; font-size: 12px; max-height: 260px; overflow-y: auto; }
#events li { padding: 2px 4px; border-left: 3px solid transparent; cursor: pointer; word-break: break-word; }
#events li:hover { background: var(--panel2); }
#events li .t { color: var(--muted); margin-right: 6px; }
#events li.navigation { border-left-color: var(--navigation); }
#events li.error { border-left-color: var(--error); }
#events li.request-failed { border-left-color: var(--request-failed); }
#events li.note { color: var(--muted); cursor: default; }
#dom { font: 11px/1.35 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word;
  background: #181818; border: 1px solid var(--line); border-radius: 3px; padding: 6px; margin: 0; max-height: 320px;
  overflow-y: auto; }
`;

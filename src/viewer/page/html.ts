/** The viewer's one HTML document. Data never reaches it as markup: the scripts set textContent only. */
export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>krometrail · evidence viewer</title>
<link rel="icon" href="./favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="./style.css">
<script type="module" src="./js/main.js"></script>
</head>
<body>
<header id="topbar">
  <span class="brand">krometrail</span><span class="brand-sub">evidence viewer</span>
  <span id="session-title" class="muted"></span>
  <span class="spacer"></span>
  <span id="live-badge" class="badge live" hidden>● live</span>
</header>
<div id="layout">
  <aside id="sidebar">
    <h2>Sessions</h2>
    <div id="sessions" role="list"><p class="muted">Loading…</p></div>
    <h2>Actions <span id="action-count" class="muted"></span></h2>
    <ol id="actions"></ol>
  </aside>
  <main id="center">
    <section id="question" hidden aria-live="polite">
      <div class="question-head"><span class="badge ask">The agent asks</span><span id="question-at" class="muted"></span></div>
      <p id="question-text"></p>
      <div id="question-choices"></div>
      <div class="question-foot">
        <span>Mark: <b id="mark-time">none</b> <span class="muted">(click the timeline to mark a moment)</span></span>
        <span class="spacer"></span>
        <span id="question-status" role="status"></span>
        <button id="dismiss" type="button" class="ghost">Dismiss</button>
      </div>
    </section>
    <div id="stage">
      <img id="frame" alt="recorded frame at the playhead" hidden>
      <p id="stage-empty" class="muted">Choose a session on the left.</p>
    </div>
    <div id="playbar">
      <button id="prev" type="button" title="Previous frame (←)">◀</button>
      <button id="next" type="button" title="Next frame (→)">▶</button>
      <span id="playhead-time" class="time">–</span>
      <input id="scrubber" type="range" min="0" max="0" value="0" step="1" aria-label="frame">
      <span id="frame-info" class="muted"></span>
    </div>
    <div id="filmstrip" aria-label="filmstrip"></div>
    <div id="timeline" data-page-id="" data-frame-count="0" data-start-ms="0" data-end-ms="0" tabindex="0"
      aria-label="timeline: click to move the playhead, drag to select a range"></div>
    <div id="axis"></div>
    <div id="legend">
      <span class="key k-frame">frames</span><span class="key k-interaction">interactions</span>
      <span class="key k-navigation">navigations</span><span class="key k-error">console errors</span>
      <span class="key k-request-failed">failed requests</span><span class="key k-gap">gaps</span>
      <span class="key k-marker">markers</span><span class="key k-mark">your mark</span>
      <span class="spacer"></span>
      <span class="keys">← → frame · Shift 10 frames · Home/End · click to seek · drag to select a range</span>
    </div>
  </main>
  <aside id="inspector">
    <section class="panel" id="artifacts">
      <h2>Range <span id="range-text" class="muted"></span></h2>
      <div class="row">
        <button id="make-artifacts" type="button" class="primary" disabled>Storyboard &amp; difference map</button>
        <label class="muted"><input id="with-video" type="checkbox"> video</label>
        <button id="clear-range" type="button" class="ghost" hidden>Clear selection</button>
      </div>
      <div id="artifact-images">
        <p id="artifacts-status" class="muted">Make the storyboard, difference map and video of the range around the playhead, or drag on the timeline to choose a range.</p>
        <figure hidden><figcaption>Storyboard</figcaption><a id="storyboard-link" target="_blank" rel="noopener noreferrer"><img id="storyboard" alt="storyboard"></a></figure>
        <figure hidden><figcaption>Difference map</figcaption><a id="difference-map-link" target="_blank" rel="noopener noreferrer"><img id="difference-map" alt="difference map"></a></figure>
        <figure hidden><figcaption>Video</figcaption><video id="video" controls muted playsinline></video></figure>
      </div>
    </section>
    <section class="panel">
      <h2>Events <span id="events-count" class="muted"></span></h2>
      <ol id="events"></ol>
    </section>
    <section class="panel" id="dom-panel" hidden>
      <h2>DOM at the playhead <span id="dom-at" class="muted"></span></h2>
      <pre id="dom"></pre>
    </section>
  </aside>
</div>
</body>
</html>
`;

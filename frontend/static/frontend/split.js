/* The split timeline of one library video (frontend/templates/frontend/video_split.html).
   Frame numbers are the source of truth: boundary b is the start of frame b (b = frame count: the end
   of the video). The server plans every change (snapping, the 1 s rule, scene warnings); this page
   only draws and asks. */
"use strict";

(() => {
  const app = document.getElementById("split-app");
  if (!app) return;

  const $ = (id) => document.getElementById(id);
  const player = $("split-player");
  const track = $("timeline");
  const state = { t: null, start: 0, end: 0, trimStart: 0, trimEnd: 0, planSeq: 0, planTimer: null, framesTimer: {},
    pollTimer: null };

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    const input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  async function request(url, options = {}) {
    const response = await fetch(url, {
      credentials: "same-origin",
      ...options,
      headers: { Accept: "application/json", ...(options.headers || {}) },
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
    return { status: response.status, ok: response.ok, data };
  }

  function post(url, body) {
    return request(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body),
    });
  }

  function el(tag, attrs = {}, text = "") {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    if (text) node.textContent = text;
    return node;
  }

  /* ---- Frames and times ------------------------------------------------------------------ */

  function timeOf(boundary) {
    const t = state.t;
    return boundary >= t.frame_count ? t.duration : t.frame_times[boundary];
  }

  function boundaryAt(seconds) {
    const t = state.t;
    let low = 0;
    let high = t.frame_count;  // boundaries 0..frame_count
    while (low < high) {  // first boundary whose time is >= seconds
      const mid = (low + high) >> 1;
      if (timeOf(mid) < seconds) low = mid + 1; else high = mid;
    }
    if (low > 0 && seconds - timeOf(low - 1) <= timeOf(low) - seconds) return low - 1;
    return low;
  }

  function frameShownAt(seconds) {
    const t = state.t;
    let low = 0;
    let high = t.frame_count - 1;
    while (low < high) {  // last frame starting at or before `seconds`
      const mid = (low + high + 1) >> 1;
      if (t.frame_times[mid] <= seconds + 1e-6) low = mid; else high = mid - 1;
    }
    return low;
  }

  const percent = (boundary) => (100 * timeOf(boundary)) / state.t.duration;
  const secs = (value) => Number(value).toFixed(3);

  /* ---- The player ------------------------------------------------------------------------ */

  function seekTo(boundary) {
    const t = state.t;
    const frame = Math.min(boundary, t.frame_count - 1);
    player.pause();
    // the middle of the frame's slot, so that rounding cannot show its neighbour
    player.currentTime = timeOf(frame) + 0.5 / t.fps;
  }

  function showPlayhead() {
    if (!state.t) return;
    const frame = frameShownAt(player.currentTime);
    $("player-frame").textContent = String(frame);
    $("player-time").textContent = secs(player.currentTime);
    $("playhead").style.left = `${(100 * Math.min(player.currentTime, state.t.duration)) / state.t.duration}%`;
  }

  /* ---- Boundaries ------------------------------------------------------------------------ */

  function setBoundary(which, value, { seek = true } = {}) {
    const t = state.t;
    let frame = Math.round(Number(value));
    if (!Number.isFinite(frame)) frame = state[which];
    if (which === "start") frame = Math.max(0, Math.min(frame, state.end - 1));
    else frame = Math.max(state.start + 1, Math.min(frame, t.frame_count));
    state[which] = frame;
    drawBoundaries();
    drawLocalParts();
    schedulePlan();
    scheduleFrames(which);
    if (seek) seekTo(frame);
  }

  function drawBoundaries() {
    for (const which of ["start", "end"]) {
      const frame = state[which];
      const handle = $(`handle-${which}`);
      handle.style.left = `${percent(frame)}%`;
      handle.setAttribute("aria-valuemax", String(state.t.frame_count));
      handle.setAttribute("aria-valuenow", String(frame));
      handle.setAttribute("aria-valuetext", `frame ${frame}, ${secs(timeOf(frame))} s`);
      $(`${which}-frame`).value = String(frame);
      $(`${which}-seconds`).value = secs(timeOf(frame));
    }
  }

  /* Seconds trimmed from the start of V_pre and the end of V_post (the authors' split: 0.17 s each). */
  function setTrims(trimStart, trimEnd) {
    state.trimStart = Math.max(0, Number(trimStart) || 0);
    state.trimEnd = Math.max(0, Number(trimEnd) || 0);
    $("trim-start").value = String(state.trimStart);
    $("trim-end").value = String(state.trimEnd);
  }

  function onTrimChange() {
    setTrims($("trim-start").value, $("trim-end").value);
    drawLocalParts();
    schedulePlan();
  }

  /* Before the server answers, the parts follow the handles as they are. */
  function drawLocalParts() {
    const t = state.t;
    const preStart = Math.min(boundaryAt(state.trimStart), state.start);
    const postEnd = Math.max(boundaryAt(Math.max(0, t.duration - state.trimEnd)), state.end);
    const bounds = { pre: [preStart, state.start], main: [state.start, state.end], post: [state.end, postEnd] };
    for (const [name, [a, b]] of Object.entries(bounds)) {
      drawPart({ name, label: { pre: "V_pre", main: "V_main", post: "V_post" }[name], start_frame: a, end_frame: b,
        seconds: (b - a) / t.fps, too_short: false });
    }
  }

  function drawPart(part) {
    const bar = $(`part-${part.name}`);
    bar.style.left = `${percent(part.start_frame)}%`;
    bar.style.width = `${percent(part.end_frame) - percent(part.start_frame)}%`;
    bar.classList.toggle("too-short", Boolean(part.too_short));
    bar.textContent = `${part.label} ${Number(part.seconds).toFixed(2)} s`;
    bar.title = `${part.label}: frames ${part.start_frame}–${part.end_frame - 1}`;
  }

  function onHandleKey(event) {
    const which = event.currentTarget.dataset.which;
    const fps = Math.max(1, Math.round(state.t.fps));
    const steps = { ArrowLeft: -1, ArrowRight: 1, ArrowDown: -1, ArrowUp: 1, PageDown: -fps, PageUp: fps };
    let step = steps[event.key];
    if (step === undefined) {
      if (event.key === "Home") step = -state.t.frame_count;
      else if (event.key === "End") step = state.t.frame_count;
      else return;
    }
    if (event.shiftKey && Math.abs(step) === 1) step *= 10;
    event.preventDefault();
    setBoundary(which, state[which] + step);
  }

  function boundaryFromPointer(event) {
    const box = track.getBoundingClientRect();
    const share = Math.max(0, Math.min(1, (event.clientX - box.left) / box.width));
    return boundaryAt(share * state.t.duration);
  }

  function setupHandle(handle) {
    handle.addEventListener("keydown", onHandleKey);
    handle.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      handle.focus();
      handle.setPointerCapture(event.pointerId);
      handle.classList.add("dragging");
    });
    handle.addEventListener("pointermove", (event) => {
      if (!handle.hasPointerCapture(event.pointerId)) return;
      setBoundary(handle.dataset.which, boundaryFromPointer(event), { seek: false });
    });
    const finish = (event) => {
      if (!handle.hasPointerCapture(event.pointerId)) return;
      handle.releasePointerCapture(event.pointerId);
      handle.classList.remove("dragging");
      seekTo(state[handle.dataset.which]);
    };
    handle.addEventListener("pointerup", finish);
    handle.addEventListener("pointercancel", finish);
  }

  /* ---- The frames at the boundaries --------------------------------------------------------- */

  function frameUrl(index) {
    return state.t.frame_url.replace("{index}", String(index));
  }

  function scheduleFrames(which) {
    clearTimeout(state.framesTimer[which]);
    state.framesTimer[which] = setTimeout(() => showFrames(which), 120);
  }

  function showFrames(which) {
    const boundary = state[which];
    const figure = $(`frames-${which}`);
    for (const [side, index] of [["before", boundary - 1], ["after", boundary]]) {
      const img = figure.querySelector(`img[data-side="${side}"]`);
      const caption = figure.querySelector(`[data-caption="${side}"]`);
      if (index >= 0 && index < state.t.frame_count) {
        img.src = frameUrl(index);
        img.hidden = false;
        caption.textContent = `frame ${index} · ${secs(timeOf(index))} s`;
      } else {
        img.removeAttribute("src");
        img.hidden = true;
        caption.textContent = index < 0 ? "(start of the video)" : "(end of the video)";
      }
    }
  }

  /* ---- The plan ------------------------------------------------------------------------------- */

  function schedulePlan() {
    clearTimeout(state.planTimer);
    $("plan-state").textContent = "computing…";
    app.dataset.plan = "pending";
    $("split-button").disabled = true;
    state.planTimer = setTimeout(requestPlan, 150);
  }

  async function requestPlan() {
    const seq = ++state.planSeq;
    const query = new URLSearchParams({ start_frame: state.start, end_frame: state.end, snap: $("snap").checked ? 1 : 0,
      trim_start: state.trimStart, trim_end: state.trimEnd });
    const { status, data } = await request(`${app.dataset.planUrl}?${query}`);
    if (seq !== state.planSeq) return;  // the boundaries moved on meanwhile
    if (status !== 200 && !data.parts) {
      drawMessages($("plan-warnings"), [{ code: "refused", message: data.error || `The plan failed (${status}).` }]);
      drawMessages($("plan-notes"), []);
      $("plan-state").textContent = "refused";
      app.dataset.plan = "refused";
      return;
    }
    drawPlan(data);
  }

  function drawMessages(list, messages) {
    list.replaceChildren(...messages.map((m) => el("li", { "data-code": m.code }, m.message)));
  }

  function drawPlan(plan) {
    for (const part of plan.parts) {
      drawPart(part);
      const row = document.querySelector(`#plan-parts tr[data-part="${part.name}"]`);
      const cells = (name) => row.querySelector(`[data-field="${name}"]`);
      cells("range").textContent = part.frames ? `${part.start_frame}–${part.end_frame - 1}` : "none";
      cells("frames").textContent = `${part.frames} frames`;
      cells("seconds").textContent = `${part.seconds.toFixed(2)} s`;
      cells("seconds").classList.toggle("short", part.too_short);
      cells("times").textContent = `${secs(part.start_time)} – ${secs(part.end_time)}`;
    }
    track.querySelectorAll(".snapped-to").forEach((node) => node.remove());
    if (plan.ok) {
      for (const boundary of [plan.main_start, plan.main_end]) {
        if (boundary !== state.start && boundary !== state.end) {
          const mark = el("div", { class: "snapped-to", title: `snapped to the scene cut at frame ${boundary}` });
          mark.style.left = `${percent(boundary)}%`;
          track.append(mark);
        }
      }
    }
    drawMessages($("plan-warnings"), plan.warnings);
    drawMessages($("plan-notes"), plan.notes || []);
    const frames = plan.ok ? `frames ${plan.main_start} and ${plan.main_end}` : "refused";
    $("plan-state").textContent = plan.ok ? `cut at ${frames}` : "refused";
    app.dataset.plan = plan.ok ? "ok" : "refused";
    app.dataset.planFor = `${state.start}-${state.end}`;
    $("split-button").disabled = !plan.ok;
  }

  /* ---- The split a localization study suggests -------------------------------------------------- */

  function drawSuggestion() {
    const found = state.t.suggestion;
    if (!found) return;
    const box = $("suggestion");
    box.hidden = false;
    box.classList.toggle("poor", Boolean(found.poor_agreement));
    box.dataset.poor = found.poor_agreement ? "true" : "false";
    $("suggestion-label").textContent = found.label;
    $("suggestion-study").href = found.url;
    const parts = found.suggestion;
    const warnings = [];
    if (found.poor_agreement) {
      warnings.push(`Poor agreement between the annotators (${found.agreement}): check the event before accepting.`);
    }
    if (!parts) {
      warnings.push(`The marks give no time for the event (${found.aggregate.reason || "no mark"}): no suggestion.`);
      $("accept-suggestion").hidden = true;
    } else {
      $("suggestion-parts").textContent = `Event at ${secs(found.time)} s (${found.aggregate.branch}): `
        + parts.parts.map((part) => `${part.label} ${secs(part.start)}–${secs(part.end)} s`).join(", ")
        + `; the split starts V_main at ${secs(parts.event_start)} s (frame ${found.start_frame}) and V_post at `
        + `${secs(parts.event_end)} s (frame ${found.end_frame}), trimming ${secs(parts.trim_start)} s from the start `
        + `and ${secs(parts.trim_end)} s from the end.`;
      warnings.push(...parts.problems);
      for (const [which, frame] of [["start", found.start_frame], ["end", found.end_frame]]) {
        const mark = el("div", { class: "suggested", "data-suggested": which,
          title: `suggested ${which === "start" ? "event start" : "event end"}: frame ${frame}` });
        mark.append(el("span", {}, `suggested ${which}`));
        mark.style.left = `${percent(frame)}%`;
        track.append(mark);
      }
    }
    const warning = $("suggestion-warning");
    warning.textContent = warnings.join(" ");
    warning.hidden = !warnings.length;
  }

  async function acceptSuggestion() {
    const found = state.t.suggestion;
    const button = $("accept-suggestion");
    button.disabled = true;
    state.start = found.start_frame;
    state.end = Math.max(found.end_frame, state.start + 1);
    setTrims(found.suggestion.trim_start, found.suggestion.trim_end);
    drawBoundaries();
    drawLocalParts();
    schedulePlan();
    $("split-status").textContent = "Asking for the suggested split…";
    const { status, data } = await post(app.dataset.createUrl, {
      start: found.suggestion.event_start, end: found.suggestion.event_end, snap: $("snap").checked,
      trim_start: state.trimStart, trim_end: state.trimEnd,
    });
    if (status === 201) {
      $("split-status").textContent = `Split #${data.split.id} queued with the suggested boundaries.`;
      await loadSplits();
    } else {
      $("split-status").textContent = data.error || (data.warnings && data.warnings.length
        ? data.warnings.map((w) => w.message).join(" ") : `The split was refused (${status}).`);
    }
    button.disabled = false;
  }

  /* ---- Splitting and the list of splits ------------------------------------------------------ */

  async function split() {
    const button = $("split-button");
    button.disabled = true;
    $("split-status").textContent = "Asking for the split…";
    const { status, data } = await post(app.dataset.createUrl, {
      start_frame: state.start, end_frame: state.end, snap: $("snap").checked,
      trim_start: state.trimStart, trim_end: state.trimEnd,
    });
    if (status === 201) {
      $("split-status").textContent = `Split #${data.split.id} queued.`;
      await loadSplits();
    } else {
      $("split-status").textContent = data.error || `The split was refused (${status}).`;
    }
    button.disabled = app.dataset.plan !== "ok";
  }

  async function resolve(row, decision) {
    const { status, data } = await post(row.resolve_url, { decision });
    if (status !== 200) {
      $("split-status").textContent = data.error || `The decision was refused (${status}).`;
      return;
    }
    $("split-status").textContent = decision === "split_anyway"
      ? `Split anyway: split #${data.new_split} queued.` : `Split #${row.id} filtered out.`;
    drawSplits(data.splits);
  }

  function splitRow(row) {
    const tr = el("tr", { "data-split-id": row.id, "data-status": row.status });
    tr.append(el("td", {}, `#${row.id}`));
    tr.append(el("td", {}, `${formatWhen(row.created_at)}${row.requested_by ? ` by ${row.requested_by}` : ""}`));
    const trimmed = row.trim_start || row.trim_end ? ` (trimmed ${secs(row.trim_start)} s / ${secs(row.trim_end)} s)` : "";
    tr.append(el("td", { "data-field": "event" },
      `${secs(row.event_start)} – ${secs(row.event_end)}${row.snap ? "" : " (no snapping)"}${trimmed}`));
    tr.append(el("td", {}, row.main_start_frame === null ? "…"
      : `${row.main_start_frame} / ${row.main_end_frame} of ${row.frame_count}`));
    const stateCell = el("td", { "data-field": "state" });
    stateCell.append(el("span", { class: `badge ${row.status}` }, row.status_label));
    if (!row.finished && row.job) {
      stateCell.append(" ", el("progress", { max: "100", value: String(row.job.progress) }),
        " ", el("span", { class: "job-message" }, row.job.message || row.job.status));
    } else if (row.message) {
      stateCell.append(el("div", { class: "hint" }, row.message));
    }
    if (row.job) {
      const jobLine = el("div", { class: "hint" });
      jobLine.append(el("a", { href: row.job.url }, `job #${row.job.id}`));
      stateCell.append(jobLine);
    }
    if (row.can_resolve) {
      const actions = el("div", { class: "split-actions" });
      const anyway = el("button", { type: "button", class: "secondary", "data-action": "split_anyway" }, "Split anyway");
      const out = el("button", { type: "button", class: "danger", "data-action": "filter_out" }, "Filter out");
      anyway.addEventListener("click", () => resolve(row, "split_anyway"));
      out.addEventListener("click", () => resolve(row, "filter_out"));
      actions.append(anyway, out);
      stateCell.append(actions);
    }
    tr.append(stateCell);
    const clipsCell = el("td", { "data-field": "clips" });
    if (row.clips.length) {
      const list = el("ul", { class: "clips" });
      for (const clip of row.clips) {
        const item = el("li");
        item.append(el("a", { href: clip.url, "data-clip": clip.name }, clip.label),
          ` (${clip.frames} frames, ${Number(clip.duration).toFixed(2)} s)`);
        list.append(item);
      }
      clipsCell.append(list);
    } else {
      clipsCell.textContent = "—";
    }
    tr.append(clipsCell);
    return tr;
  }

  function drawSplits(rows) {
    const body = document.querySelector("#split-table tbody");
    if (!rows.length) {
      body.replaceChildren(el("tr", { class: "empty-row" }, ""));
      body.firstChild.append(el("td", { colspan: "6", class: "empty" }, "No split yet."));
    } else {
      body.replaceChildren(...rows.map(splitRow));
    }
    clearTimeout(state.pollTimer);
    if (rows.some((row) => !row.finished)) state.pollTimer = setTimeout(loadSplits, 1000);
  }

  async function loadSplits() {
    const { status, data } = await request(app.dataset.listUrl);
    if (status === 200) drawSplits(data.splits);
    else state.pollTimer = setTimeout(loadSplits, 3000);
  }

  /* ---- Start ---------------------------------------------------------------------------------- */

  function videoAspect() {
    const [w, h] = app.dataset.aspect.split("/").map(Number);
    return w > 0 && h > 0 ? [w, h] : [16, 9];
  }

  function sizeBoundaryFrames() {
    const [w, h] = videoAspect();
    document.querySelectorAll(".frame-pair img").forEach((img) => { img.style.aspectRatio = `${w} / ${h}`; });
  }

  function loadStrip() {
    const [w, h] = videoAspect();
    const strip = $("timeline-strip");
    const tileWidth = strip.clientHeight * (w / h);
    const count = Math.max(4, Math.min(40, Math.round(strip.clientWidth / tileWidth) || 12));
    const img = $("thumb-strip");
    img.addEventListener("load", () => { img.hidden = false; app.dataset.thumbnails = String(count); }, { once: true });
    img.src = `${state.t.thumbnails_url}?count=${count}`;
  }

  function drawCuts() {
    for (const cut of state.t.scene_cuts) {
      const mark = el("div", { class: "cut", title: `scene cut at frame ${cut.frame} (${secs(cut.time)} s)` });
      mark.append(el("span", {}, `cut ${cut.frame}`));
      mark.style.left = `${percent(cut.frame)}%`;
      track.append(mark);
    }
  }

  async function start() {
    const { status, data } = await request(app.dataset.timelineUrl);
    if (status !== 200) {
      const box = $("timeline-error");
      box.textContent = data.error || `The video could not be read (${status}).`;
      box.hidden = false;
      app.dataset.state = "error";
      return;
    }
    state.t = data;
    state.start = data.initial.start_frame;
    state.end = Math.max(data.initial.end_frame, state.start + 1);
    setTrims(data.initial.trim_start, data.initial.trim_end);
    const cuts = data.scene_cuts.length;
    $("video-facts").textContent = `${data.frame_count} frames at ${Number(data.fps.toFixed(3))} fps, ${secs(data.duration)} s, `
      + `${cuts ? `${cuts + 1} scenes` : "one scene"}; boundaries from ${data.initial.origin}`;
    for (const which of ["start", "end"]) {
      $(`${which}-frame`).max = String(data.frame_count);
      $(`${which}-seconds`).max = secs(data.duration);
      $(`${which}-frame`).addEventListener("change", (event) => setBoundary(which, event.target.value));
      $(`${which}-seconds`).addEventListener("change", (event) => {
        const seconds = Number(event.target.value);
        setBoundary(which, Number.isFinite(seconds) ? boundaryAt(seconds) : state[which]);
      });
      setupHandle($(`handle-${which}`));
    }
    $("snap").addEventListener("change", schedulePlan);
    $("trim-start").addEventListener("change", onTrimChange);
    $("trim-end").addEventListener("change", onTrimChange);
    $("split-button").addEventListener("click", split);
    $("accept-suggestion").addEventListener("click", acceptSuggestion);
    $("timeline-strip").addEventListener("click", (event) => seekTo(Math.min(boundaryFromPointer(event),
      data.frame_count - 1)));
    player.addEventListener("timeupdate", showPlayhead);
    player.addEventListener("seeked", showPlayhead);
    drawCuts();
    drawSuggestion();
    loadStrip();
    drawBoundaries();
    drawLocalParts();
    showFrames("start");
    showFrames("end");
    showPlayhead();
    app.dataset.state = "ready";
    await requestPlan();
  }

  document.addEventListener("DOMContentLoaded", () => {
    sizeBoundaryFrames();
    start();
    loadSplits();
  });
})();

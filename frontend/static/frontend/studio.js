/* The image studio (frontend/studio_views.py): the attempt form sent with fetch, the inpainting mask
   painter, the attempt tree refreshed in place when a job ends, comparisons and picking a final image.
   Uses csrfToken(), getJSON(), el(), localiseTimes() and watchJobs() from app.js. */
"use strict";

const MAX_UNDO = 30;

async function postStudio(url, body) {
  const response = await fetch(url, {
    method: "POST", body, credentials: "same-origin",
    headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
  });
  let data = {};
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  return { ok: response.ok, status: response.status, data };
}

function sayIn(root, error, message) {
  const errorNode = root.querySelector('[data-role="form-error"]');
  const messageNode = root.querySelector('[data-role="form-message"]');
  if (errorNode) errorNode.textContent = error || "";
  if (messageNode) messageNode.textContent = message || "";
}

/* ---- The mask painter: white = regenerate, a PNG of the parent's own size ------------------------ */

const painter = { canvas: null, ctx: null, image: null, history: [], drawing: false, last: null, ready: false };

function brushSize() {
  return Number(document.getElementById("mask-brush").value);
}

function tool() {
  const checked = document.querySelector('input[name="mask-tool"]:checked');
  return checked ? checked.value : "brush";
}

function setMaskStatus(text) {
  const node = document.getElementById("mask-status");
  if (node) node.textContent = text;
}

function loadParent() {
  const select = document.getElementById("studio-parent");
  if (!select || !painter.canvas) return;
  const option = select.selectedOptions[0];
  const src = option ? option.dataset.src : "";
  painter.ready = false;
  if (!src) {
    painter.image.hidden = true;
    painter.canvas.hidden = true;
    setMaskStatus("Choose a parent image to paint on.");
    return;
  }
  if (painter.image.getAttribute("src") === src && painter.canvas.width) {
    painter.ready = true;
    return;
  }
  setMaskStatus("Loading the parent image…");
  painter.image.onload = () => {
    painter.canvas.width = painter.image.naturalWidth;
    painter.canvas.height = painter.image.naturalHeight;
    painter.ctx.clearRect(0, 0, painter.canvas.width, painter.canvas.height);
    painter.history = [];
    painter.image.hidden = false;
    painter.canvas.hidden = false;
    painter.ready = true;
    setMaskStatus(`${painter.canvas.width}×${painter.canvas.height}: paint the region to regenerate.`);
  };
  painter.image.onerror = () => setMaskStatus("The parent image could not be loaded.");
  painter.image.src = src;
}

function pointAt(event) {
  const rect = painter.canvas.getBoundingClientRect();
  return {
    x: ((event.clientX - rect.left) * painter.canvas.width) / rect.width,
    y: ((event.clientY - rect.top) * painter.canvas.height) / rect.height,
  };
}

function strokeTo(point) {
  const ctx = painter.ctx;
  ctx.globalCompositeOperation = tool() === "eraser" ? "destination-out" : "source-over";
  ctx.strokeStyle = "rgba(255, 40, 90, 1)";
  ctx.fillStyle = "rgba(255, 40, 90, 1)";
  ctx.lineWidth = brushSize();
  ctx.lineCap = "round";
  ctx.lineJoin = "round";
  const from = painter.last || point;
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  ctx.lineTo(point.x + (from === point ? 0.01 : 0), point.y);
  ctx.stroke();
  painter.last = point;
}

function remember() {
  painter.history.push(painter.ctx.getImageData(0, 0, painter.canvas.width, painter.canvas.height));
  if (painter.history.length > MAX_UNDO) painter.history.shift();
}

function paintedPixels() {
  if (!painter.ready) return 0;
  const { data } = painter.ctx.getImageData(0, 0, painter.canvas.width, painter.canvas.height);
  let count = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] >= 128) count += 1;
  return count;
}

/* The painted strokes as a black-and-white PNG of the parent's size. */
function maskBlob() {
  const { width, height } = painter.canvas;
  const source = painter.ctx.getImageData(0, 0, width, height).data;
  const out = document.createElement("canvas");
  out.width = width;
  out.height = height;
  const outCtx = out.getContext("2d");
  const target = outCtx.createImageData(width, height);
  for (let i = 0; i < source.length; i += 4) {
    const value = source[i + 3] >= 128 ? 255 : 0;
    target.data[i] = value;
    target.data[i + 1] = value;
    target.data[i + 2] = value;
    target.data[i + 3] = 255;
  }
  outCtx.putImageData(target, 0, 0);
  return new Promise((resolve) => out.toBlob(resolve, "image/png"));
}

function setupPainter() {
  const canvas = document.getElementById("mask-canvas");
  if (!canvas) return;
  painter.canvas = canvas;
  painter.ctx = canvas.getContext("2d", { willReadFrequently: true });
  painter.image = document.getElementById("mask-parent");
  canvas.style.touchAction = "none";
  canvas.addEventListener("pointerdown", (event) => {
    if (!painter.ready) return;
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    remember();
    painter.drawing = true;
    painter.last = null;
    strokeTo(pointAt(event));
  });
  canvas.addEventListener("pointermove", (event) => {
    if (painter.drawing) strokeTo(pointAt(event));
  });
  const stop = () => { painter.drawing = false; painter.last = null; };
  canvas.addEventListener("pointerup", stop);
  canvas.addEventListener("pointercancel", stop);
  const brush = document.getElementById("mask-brush");
  brush.addEventListener("input", () => { document.getElementById("mask-brush-size").textContent = brush.value; });
  document.getElementById("mask-undo").addEventListener("click", () => {
    const previous = painter.history.pop();
    if (previous) painter.ctx.putImageData(previous, 0, 0);
  });
  document.getElementById("mask-clear").addEventListener("click", () => {
    if (!painter.ready) return;
    remember();
    painter.ctx.clearRect(0, 0, canvas.width, canvas.height);
  });
  document.getElementById("studio-parent").addEventListener("change", loadParent);
  loadParent();
}

/* ---- The live parts: tree, parent choices, current image --------------------------------------- */

const compareKeys = [];
let refreshing = null;

function applyCompareSelection() {
  document.querySelectorAll("[data-compare]").forEach((box) => { box.checked = compareKeys.includes(box.dataset.compare); });
  const button = document.getElementById("compare-selected");
  if (!button) return;
  button.disabled = compareKeys.length !== 2;
  document.getElementById("compare-a").value = compareKeys[0] || "";
  document.getElementById("compare-b").value = compareKeys[1] || "";
}

async function refreshLive() {
  const tree = document.getElementById("attempt-tree");
  if (!tree) return;
  let data;
  try { data = await getJSON(tree.dataset.liveUrl); } catch (e) { return; }
  tree.innerHTML = data.tree;
  const select = document.getElementById("studio-parent");
  if (select) {
    const previous = select.value;
    select.innerHTML = data.parents;
    if ([...select.options].some((option) => option.value === previous)) select.value = previous;
  }
  const current = document.querySelector('[data-live="current"]');
  if (current) current.innerHTML = data.current;
  applyCompareSelection();
  localiseTimes(tree);
  watchJobs();
}

function refreshSoon() {
  clearTimeout(refreshing);
  refreshing = setTimeout(refreshLive, 150);
}

/* ---- The attempt form ---------------------------------------------------------------------------- */

function setupForm() {
  const form = document.querySelector("form[data-studio-start]");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const mode = event.submitter ? event.submitter.value : "text2image";
    const body = new FormData(form);
    body.set("mode", mode);
    if (mode === "text2image") body.delete("parent");
    if (mode === "inpaint") {
      if (!painter.ready) { sayIn(form, "Choose a parent image and paint the region to regenerate.", ""); return; }
      if (!paintedPixels()) { sayIn(form, "The mask is empty: paint the region to regenerate.", ""); return; }
      body.set("mask", await maskBlob(), "mask.png");
    }
    const buttons = form.querySelectorAll('button[type="submit"]');
    buttons.forEach((button) => { button.disabled = true; });
    sayIn(form, "", "Sending…");
    try {
      const { ok, data } = await postStudio(form.action, body);
      if (!ok) { sayIn(form, data.error, ""); return; }
      sayIn(form, "", data.message);
      await refreshLive();
    } finally {
      buttons.forEach((button) => { button.disabled = false; });
    }
  });
}

function reuse(settings) {
  const form = document.querySelector("form[data-studio-start]");
  if (!form) return;
  const suffix = document.getElementById("studio-suffix");
  let prompt = settings.prompt || "";
  if (suffix.value && prompt.endsWith(suffix.value)) prompt = prompt.slice(0, -suffix.value.length);
  else suffix.value = "";
  document.getElementById("studio-prompt").value = prompt;
  const fields = { seed: "studio-seed", negative_prompt: "studio-negative", steps: "studio-steps",
    guidance: "studio-guidance", width: "studio-width", height: "studio-height", strength: "studio-strength" };
  for (const [name, id] of Object.entries(fields)) {
    if (settings[name] !== undefined && settings[name] !== "") document.getElementById(id).value = settings[name];
  }
  document.getElementById("studio-scheduler").value = settings.scheduler || "";
  const picker = document.getElementById(settings.mode === "inpaint" ? "studio-inpaint-model" : "studio-model");
  const entry = [...picker.options].find((option) => option.dataset.modelId === settings.model);
  if (entry) picker.value = entry.value;  // the registered model the attempt used, when it is still offered
  form.scrollIntoView({ behavior: "smooth", block: "start" });
}

/* ---- Clicks inside the tree (it is re-rendered, so they are delegated) -------------------------- */

function setupTree() {
  document.addEventListener("click", (event) => {
    const useParent = event.target.closest("[data-use-parent]");
    if (useParent) {
      const select = document.getElementById("studio-parent");
      if (select) {
        select.value = useParent.dataset.useParent;
        loadParent();
        document.getElementById("mask-painter").scrollIntoView({ behavior: "smooth", block: "center" });
      }
      return;
    }
    const reuseButton = event.target.closest("[data-reuse]");
    if (reuseButton) {
      try { reuse(JSON.parse(reuseButton.dataset.reuse)); } catch (e) { /* settings unreadable: nothing to fill */ }
    }
  });
  document.addEventListener("change", (event) => {
    const box = event.target.closest("[data-compare]");
    if (!box) return;
    const key = box.dataset.compare;
    const at = compareKeys.indexOf(key);
    if (box.checked && at < 0) compareKeys.push(key);
    if (!box.checked && at >= 0) compareKeys.splice(at, 1);
    while (compareKeys.length > 2) compareKeys.shift();
    applyCompareSelection();
  });
  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-studio-final]");
    if (!form) return;
    event.preventDefault();
    const { ok, data } = await postStudio(form.action, new FormData(form));
    const where = document.querySelector("form[data-studio-start]") || document.body;
    sayIn(where, ok ? "" : data.error, ok ? data.message : "");
    if (!ok) return;
    form.querySelectorAll("button").forEach((button) => { button.disabled = true; });
    refreshLive();
  });
  document.addEventListener("job-finished", (event) => {
    if (event.target.closest && event.target.closest("#attempt-tree")) refreshSoon();
  });
}

/* ---- The comparison page's overlay --------------------------------------------------------------- */

function setupOverlay() {
  const fade = document.getElementById("overlay-fade");
  if (!fade) return;
  const top = document.getElementById("overlay-top");
  const apply = () => { top.style.opacity = String(Number(fade.value) / 100); };
  fade.addEventListener("input", apply);
  apply();
}

document.addEventListener("DOMContentLoaded", () => {
  setupPainter();
  setupForm();
  setupTree();
  setupOverlay();
  applyCompareSelection();
});

/* Small progressive enhancements: uploads with progress, live job status. No build step. */
"use strict";

const VIDEO_EXT = [".mp4", ".m4v", ".mov", ".webm", ".mkv", ".avi"];

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function setField(root, name, text) {
  root.querySelectorAll(`[data-field="${name}"]`).forEach((node) => { node.textContent = text; });
}

/* ---- Media rows ------------------------------------------------------------------------- */

function fillAsset(row, asset) {
  if (row.dataset.assetKind === "video") {
    setField(row, "duration", asset.duration ? `${asset.duration.toFixed(2)} s` : "…");
    setField(row, "fps", asset.fps ? String(Math.round(asset.fps * 100) / 100) : "…");
    setField(row, "codec", asset.codec || "…");
  } else {
    setField(row, "format", asset.format || "…");
  }
  setField(row, "dimensions", asset.width ? `${asset.width}×${asset.height}` : "…");
  const status = row.querySelector('[data-field="status"]');
  if (status) {
    status.replaceChildren(el("span", { class: asset.status === "ready" ? "badge ok" : "badge" }, asset.status));
  }
  const thumbUrl = asset.poster_url || asset.thumbnail_url;
  const thumb = row.querySelector(".thumb");
  if (thumbUrl && thumb && !thumb.querySelector("img")) thumb.append(el("img", { src: thumbUrl, alt: "" }));
}

function newAssetRow(kind, asset) {
  const row = el("tr", {
    "data-asset-kind": kind,
    "data-asset-id": asset.id,
    "data-asset-url": `/api/${kind}s/${asset.id}/`,
  });
  if (asset.probe_job && asset.status !== "ready") row.dataset.jobId = asset.probe_job;
  const link = el("a", { href: `/library/${kind}s/${asset.id}/` }, asset.title);
  const cells = kind === "video"
    ? ["thumb", null, "duration", "dimensions", "fps", "codec", "status"]
    : ["thumb", null, "dimensions", "format", "status"];
  for (const name of cells) {
    const cell = el("td");
    if (name === "thumb") cell.className = "thumb";
    else if (name === null) cell.append(link);
    else { cell.dataset.field = name; cell.textContent = "…"; }
    row.append(cell);
  }
  const status = row.querySelector('[data-field="status"]');
  status.replaceChildren(el("span", { class: "badge" }, "probing"), " ", el("progress", { max: "100", value: "0" }),
    " ", el("span", { class: "job-message" }, "Queued"));
  return row;
}

/* ---- Uploads ---------------------------------------------------------------------------- */

function uploadOne(form, file) {
  const isVideo = VIDEO_EXT.some((ext) => file.name.toLowerCase().endsWith(ext));
  const kind = isVideo ? "video" : "image";
  const endpoint = isVideo ? form.dataset.videoEndpoint : form.dataset.imageEndpoint;
  const item = el("li", { class: "uploading" });
  const bar = el("progress", { max: "100", value: "0" });
  const label = el("span", {}, ` ${file.name}: uploading…`);
  item.append(bar, label);
  document.getElementById("upload-status").prepend(item);

  const body = new FormData();
  body.append("file", file);
  const request = new XMLHttpRequest();
  request.open("POST", endpoint);
  request.setRequestHeader("X-CSRFToken", csrfToken());
  request.setRequestHeader("Accept", "application/json");
  request.upload.addEventListener("progress", (event) => {
    if (event.lengthComputable) bar.value = Math.round((100 * event.loaded) / event.total);
  });
  request.addEventListener("load", () => {
    let data = {};
    try { data = JSON.parse(request.responseText); } catch (e) { data = { error: request.statusText }; }
    if (request.status === 201) {
      item.className = "ok";
      label.textContent = ` ${file.name}: uploaded, reading metadata…`;
      const table = document.querySelector(`#${kind}-table tbody`);
      table.querySelector(".empty-row")?.remove();
      const row = newAssetRow(kind, data);
      row.dataset.uploadLabel = file.name;
      item.dataset.uploadFor = `${kind}-${data.id}`;
      table.prepend(row);
      watchJobs();
    } else {
      item.className = "error";
      label.textContent = ` ${file.name}: ${data.error || "upload failed"} (${request.status})`;
    }
  });
  request.addEventListener("error", () => {
    item.className = "error";
    label.textContent = ` ${file.name}: the connection failed.`;
  });
  request.send(body);
}

function setupUpload() {
  const form = document.getElementById("upload-form");
  if (!form) return;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("upload-input");
    for (const file of input.files) uploadOne(form, file);
    form.reset();
  });
}

/* The line under the upload form says "reading metadata…" until the row's probe job ends. */
function finishUploadItem(row, ok, text) {
  const item = document.querySelector(
    `#upload-status li[data-upload-for="${row.dataset.assetKind}-${row.dataset.assetId}"]`);
  if (!item) return;
  item.className = ok ? "ok" : "error";
  const label = item.querySelector("span");
  if (label) label.textContent = ` ${row.dataset.uploadLabel || ""}: ${text}`;
}

/* ---- Dates and times ------------------------------------------------------------------- */

/* One format everywhere: "2025-03-01 14:05 CET", in the viewer's own time zone. The server writes
   the same format in its zone (template filter `when`); these rewrite it where the browser knows better. */
function formatWhen(iso, seconds = false) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = {};
  new Intl.DateTimeFormat("en-CA", {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: seconds ? "2-digit" : undefined, hourCycle: "h23", timeZoneName: "short",
  }).formatToParts(date).forEach((part) => { parts[part.type] = part.value; });
  const time = `${parts.hour}:${parts.minute}${seconds ? `:${parts.second}` : ""}`;
  return `${parts.year}-${parts.month}-${parts.day} ${time} ${parts.timeZoneName}`;
}

function localiseTimes(root = document) {
  root.querySelectorAll("time[datetime][data-when]").forEach((node) => {
    node.textContent = formatWhen(node.getAttribute("datetime"), node.dataset.when === "seconds");
    node.title = node.getAttribute("datetime");
  });
}

/* ---- Live jobs -------------------------------------------------------------------------- */

let polling = false;

async function pollOnce() {
  const watched = document.querySelectorAll("[data-job-id]");
  for (const node of watched) {
    let job;
    try { job = await getJSON(`/api/jobs/${node.dataset.jobId}/`); } catch (e) { continue; }
    node.querySelectorAll("progress").forEach((bar) => { bar.value = job.progress; });
    setField(node, "progress", `${job.progress}%`);
    node.querySelectorAll(".job-message, [data-field=message]").forEach((m) => { m.textContent = job.message; });
    setField(node, "log", job.log);
    if (node.dataset.assetKind === undefined) {
      const status = node.querySelector('[data-field="status"]');
      if (status) status.replaceChildren(el("span", { class: `badge ${job.status}` }, job.status));
    }
    if (job.is_finished) {
      delete node.dataset.jobId;
      node.dispatchEvent(new CustomEvent("job-finished", { bubbles: true, detail: job }));
      if (job.finished_at) setField(node, "finished", formatWhen(job.finished_at, true));
      if (node.dataset.assetUrl && job.status === "succeeded") {
        try { fillAsset(node, await getJSON(node.dataset.assetUrl)); } catch (e) { /* row stays as is */ }
        finishUploadItem(node, true, job.message ? `ready (${job.message})` : "ready");
      } else if (node.dataset.assetUrl) {
        const status = node.querySelector('[data-field="status"]');
        status.replaceChildren(el("span", { class: "badge failed" }, "rejected"), " ", el("span", {}, job.message));
        finishUploadItem(node, false, `rejected: ${job.message}`);
      }
    }
  }
  return document.querySelectorAll("[data-job-id]").length > 0;
}

function watchJobs() {
  if (polling) return;
  polling = true;
  const tick = async () => {
    const more = await pollOnce();
    if (more) setTimeout(tick, 1000); else polling = false;
  };
  tick();
}

document.addEventListener("DOMContentLoaded", () => {
  localiseTimes();
  setupUpload();
  if (document.querySelector("[data-job-id]")) watchJobs();
});

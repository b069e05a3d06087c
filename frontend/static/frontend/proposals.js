/* The proposals queue: decisions, bulk decisions and proposal jobs sent with fetch, answers shown in
   place. Uses csrfToken(), el() and watchJobs() from app.js. */
"use strict";

async function postForm(form, submitter) {
  const body = new FormData(form);
  if (submitter && submitter.name) body.append(submitter.name, submitter.value);
  const response = await fetch(form.action, {
    method: "POST", body, credentials: "same-origin",
    headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
  });
  let data = {};
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  return { ok: response.ok, status: response.status, data };
}

function say(root, error, message) {
  const errorNode = root.querySelector('[data-role="form-error"]');
  const messageNode = root.querySelector('[data-role="form-message"]');
  if (errorNode) errorNode.textContent = error || "";
  if (messageNode) messageNode.textContent = message || "";
}

function showOutcome(result) {
  const row = document.querySelector(`tr[data-proposal-id="${result.id}"]`);
  if (!row) return;
  row.className = `outcome-${result.outcome}`;
  const badge = row.querySelector('[data-role="outcome"]');
  badge.className = `badge outcome ${result.outcome}`;
  badge.textContent = result.outcome_label;
  if (result.final_fields) {
    for (const [name, value] of Object.entries(result.final_fields)) {
      row.querySelectorAll(`[data-field-name="${name}"]`).forEach((node) => { node.textContent = String(value); });
    }
  }
  const box = row.querySelector('input[name="proposal"]');
  if (box) box.checked = false;
  const edit = row.querySelector("details.edit");
  if (edit) edit.open = false;
}

function setupDecisions() {
  document.querySelectorAll("form[data-proposal-decide]").forEach((form) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const cell = form.closest("td");
      const { ok, data } = await postForm(form, event.submitter);
      if (!ok) { say(cell, data.error, ""); return; }
      say(cell, "", data.message);
      showOutcome(data);
    });
  });
}

function selectedBoxes() {
  return [...document.querySelectorAll('input[name="proposal"][form="bulk-form"]')].filter((box) => box.checked);
}

function setupBulk() {
  const form = document.querySelector("form[data-proposals-bulk]");
  if (!form) return;
  const count = form.querySelector('[data-role="selected-count"]');
  const recount = () => { count.textContent = `${selectedBoxes().length} selected`; };
  document.addEventListener("change", (event) => {
    if (event.target.matches('input[name="proposal"]')) recount();
  });
  document.getElementById("select-all").addEventListener("change", (event) => {
    document.querySelectorAll('input[name="proposal"][form="bulk-form"]').forEach((box) => { box.checked = event.target.checked; });
    recount();
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { data } = await postForm(form, event.submitter);
    (data.decided || []).forEach(showOutcome);
    const refused = Object.entries(data.refused || {}).map(([id, why]) => `#${id}: ${why}`).join("; ");
    say(form, data.error || (refused ? `Refused: ${refused}` : ""), data.message || "");
    document.getElementById("select-all").checked = false;
    recount();
  });
}

function jobLine(data) {
  const line = el("p", { class: "set-job", "data-job-id": data.job });
  line.append(el("a", { href: data.job_url }, `Job #${data.job}`), " ",
    el("span", { "data-field": "status" }, "queued"), " ", el("progress", { max: "100", value: "0" }), " ",
    el("span", { "data-field": "progress" }, "0%"), " ", el("span", { class: "job-message" }, ""), " ",
    el("a", { href: data.queue_url, class: "button" }, "Show its proposals"));
  return line;
}

function setupJobs() {
  const start = document.querySelector("form[data-proposals-start]");
  if (start) {
    start.addEventListener("submit", async (event) => {
      event.preventDefault();
      const { ok, data } = await postForm(start, event.submitter);
      if (!ok) { say(start, data.error, ""); return; }
      say(start, "", "");
      const status = document.getElementById("start-status");
      status.prepend(jobLine(data));
      watchJobs();
    });
  }
  document.querySelectorAll("form[data-proposals-job]").forEach((form) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const { ok, data } = await postForm(form, event.submitter);
      if (!ok) { say(form, data.error, ""); return; }
      say(form, "", "");
      form.closest(".set-head").querySelector(".set-job")?.remove();
      form.closest(".set-actions").before(jobLine(data));
      watchJobs();
    });
  });
  document.querySelectorAll("form[data-proposals-review]").forEach((form) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const { ok, data } = await postForm(form, event.submitter);
      if (!ok) { say(form, data.error, ""); return; }
      say(form, "", "");
      const message = form.querySelector('[data-role="form-message"]');
      message.replaceChildren(data.message, " ", el("a", { href: data.study_url }, "Open the study"));
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  setupDecisions();
  setupBulk();
  setupJobs();
});

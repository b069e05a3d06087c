/* The CVRR-ES QA console: the "send a kept pair back to filtration" form (its URL names the item).
   Uses postForm() and say() from proposals.js. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form[data-send-back]");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const id = form.querySelector('input[name="item_id"]').value.trim();
    if (!/^\d+$/.test(id)) { say(form, "Name the kept pair by its item number.", ""); return; }
    form.action = form.dataset.sendBack.replace(/\/0\/return\/$/, `/${id}/return/`);
    const { ok, data } = await postForm(form, event.submitter);
    if (!ok) { say(form, data.error, ""); return; }
    say(form, "", "");
    form.querySelector('[data-role="form-message"]').textContent = data.message;
  });
});

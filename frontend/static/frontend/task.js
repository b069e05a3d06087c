/* Crowd work pages: the worker's task form (autosave, active time, submit, return the item), the
   completion page (back to the crowd platform) and the curators' review queue. No build step. */
"use strict";

(() => {
  const { send, show, text, ActiveClock, Autosave, localTimes } = window.CrowdWork;

  /* ---- The answers as the server expects them (see annotation.crowd.forms) -------------------- */

  function collect(form) {
    const data = {};
    form.querySelectorAll("[data-field]").forEach((box) => {
      const name = box.dataset.field;
      const checked = (part) => box.querySelector(`input[data-part="${part}"]:checked`);
      switch (box.dataset.kind) {
        case "single_choice": {
          const picked = checked("choice");
          if (picked) data[name] = picked.value;
          const why = box.querySelector('textarea[data-part="explanation"]');
          if (why && why.value.trim()) data[`${name}_explanation`] = why.value;
          const sure = checked("certainty");
          if (sure) data[`${name}_certainty`] = sure.value;
          break;
        }
        case "multi_select":
          data[name] = Array.from(box.querySelectorAll('input[data-part="choice"]:checked'), (i) => i.value);
          break;
        case "likert": {
          const picked = checked("choice");
          if (picked) data[name] = Number(picked.value);
          break;
        }
        case "free_text":
          data[name] = box.querySelector('textarea[data-part="text"]').value;
          break;
        case "time_mark": {
          const none = box.querySelector('input[data-part="none"]');
          const raw = box.querySelector('input[data-part="seconds"]').value.trim();
          if (none && none.checked) {
            data[name] = null;
            data[`${name}_none`] = true;
          } else {
            data[name] = raw === "" ? null : Number(raw);
            if (none) data[`${name}_none`] = false;
          }
          break;
        }
        case "yes_no_statements": {
          const answers = {};
          box.querySelectorAll('input[data-part="statement"]:checked').forEach((i) => {
            answers[i.dataset.statement] = i.value;
          });
          data[name] = answers;
          break;
        }
        default:
          break;
      }
    });
    return data;
  }

  /* Answers of a form whose inputs name their place (`data-path="step.field.index"`): text as written,
     radios by their checked value, list entries by index. */
  function collectPaths(form) {
    const data = {};
    form.querySelectorAll("[data-path]").forEach((input) => {
      const keys = input.dataset.path.split(".");
      let place = data;
      keys.slice(0, -1).forEach((key, i) => {
        if (!(key in place)) place[key] = /^\d+$/.test(keys[i + 1]) ? [] : {};
        place = place[key];
      });
      const last = keys[keys.length - 1];
      if (input.type !== "radio") place[last] = input.value;
      else if (input.checked) place[last] = input.value;
      else if (place[last] === undefined) place[last] = null;
    });
    return data;
  }

  /* ---- Moments of a video (time_mark fields) ---------------------------------------------------
     The player is the nearest video around the field (in its task form or review row). With the item's frame rate (data-fps) the
     field steps frame by frame and marks the start of the frame shown; the answer is in seconds. */

  function nearestVideo(box) {
    for (let node = box.parentElement; node; node = node.parentElement) {
      const video = node.querySelector("video");
      if (video) return video;
      if (node.matches("tr, #task-form")) break;  // a review row's or a task's own video only
    }
    return null;
  }

  function setupTimeMark(box) {
    const video = nearestVideo(box);
    const fps = Number(box.dataset.fps) || 0;
    const max = Number(box.dataset.max) || 0;
    const input = box.querySelector('input[data-part="seconds"]');
    const none = box.querySelector('input[data-part="none"]');
    const nowSeconds = box.querySelector('[data-part="now-seconds"]');
    const nowFrame = box.querySelector('[data-part="now-frame"]');
    const markedFrame = box.querySelector('[data-part="marked-frame"]');
    const lastFrame = fps && max ? Math.max(0, Math.ceil(max * fps - 1e-6) - 1) : Infinity;
    const frameAt = (seconds) => Math.min(lastFrame, Math.max(0, Math.floor(seconds * fps + 1e-4)));
    const round = (seconds) => Math.round(seconds * 10000) / 10000;
    const current = () => {
      if (!video) return 0;
      return fps ? frameAt(video.currentTime) / fps : video.currentTime;
    };

    function showNow() {
      nowSeconds.textContent = current().toFixed(3);
      if (nowFrame && video) nowFrame.textContent = String(frameAt(video.currentTime));
    }

    function showMark() {
      const seconds = Number(input.value);
      if (markedFrame) markedFrame.textContent = input.value.trim() === "" || !Number.isFinite(seconds)
        ? "—" : String(frameAt(seconds));
      input.disabled = Boolean(none && none.checked);
    }

    function step(by) {
      if (!video) return;
      video.pause();
      if (fps) {
        const frame = Math.min(lastFrame, Math.max(0, frameAt(video.currentTime) + by));
        video.currentTime = (frame + 0.5) / fps;  // the middle of the frame's slot shows that frame
      } else {
        video.currentTime = Math.max(0, video.currentTime + by / 25);
      }
    }

    function mark() {
      if (none && none.checked) { none.checked = false; }
      input.value = String(round(current()));
      showMark();
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }

    function goToMark() {
      const seconds = Number(input.value);
      if (!video || input.value.trim() === "" || !Number.isFinite(seconds)) return;
      video.pause();
      video.currentTime = fps ? (frameAt(seconds) + 0.5) / fps : seconds;
    }

    box.querySelectorAll("[data-step]").forEach((button) => {
      button.addEventListener("click", () => step(Number(button.dataset.step)));
    });
    box.querySelector('[data-action="mark"]')?.addEventListener("click", mark);
    box.querySelector('[data-action="go"]')?.addEventListener("click", goToMark);
    input.addEventListener("input", showMark);
    none?.addEventListener("change", showMark);
    if (video) {
      video.addEventListener("timeupdate", showNow);
      video.addEventListener("seeked", showNow);
      video.addEventListener("loadedmetadata", showNow);
    }
    showNow();
    showMark();
    return { step, mark };
  }

  function setupTimeMarks(root, { keys: withKeys = true } = {}) {
    const controls = Array.from(root.querySelectorAll('[data-kind="time_mark"]'), setupTimeMark);
    if (!withKeys || controls.length !== 1) return;  // keys only where they cannot mean two fields
    const keys = { ",": () => controls[0].step(-1), ".": () => controls[0].step(1), m: () => controls[0].mark(),
      M: () => controls[0].mark() };
    document.addEventListener("keydown", (event) => {
      const target = event.target;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
      const action = keys[event.key];
      if (!action) return;
      event.preventDefault();
      action();
    });
  }

  /* ---- The task page --------------------------------------------------------------------------- */

  function setupCounters(root) {
    root.querySelectorAll("textarea[data-counter]").forEach((area) => {
      const counter = document.getElementById(area.dataset.counter);
      const number = counter && counter.querySelector("[data-count]");
      if (!number) return;
      const update = () => { number.textContent = String(area.value.length); };
      area.addEventListener("input", update);
      update();
    });
  }

  function setupTask() {
    localTimes(document);
    const form = document.getElementById("task-form");
    if (!form) return;
    setupCounters(form);
    setupTimeMarks(form);
    // Enter never submits the form by accident: only the Submit button (or Ctrl+Enter) does.
    form.addEventListener("submit", (event) => event.preventDefault());
    if (!form.dataset.claimId) return;  // a preview: nothing to save

    const clock = new ActiveClock();
    const autosave = new Autosave(form, clock, document.getElementById("save-state"), collect);
    const submitButton = document.getElementById("submit-button");
    const releaseButton = document.getElementById("release-button");
    const formError = document.getElementById("form-error");
    const fields = document.getElementById("task-fields");
    let busy = false;

    form.addEventListener("input", () => autosave.changed());
    form.addEventListener("change", () => autosave.changed());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden") autosave.flush();
    });
    window.addEventListener("pagehide", () => autosave.flush());

    function clearErrors() {
      show(formError, "");
      form.querySelectorAll("[data-error-for]").forEach((node) => { node.textContent = ""; });
      form.querySelectorAll(".field.invalid").forEach((node) => node.classList.remove("invalid"));
    }

    function showErrors(details) {
      let first = null;
      const general = [];
      for (const [name, message] of Object.entries(details || {})) {
        const node = form.querySelector(`[data-error-for="${CSS.escape(name)}"]`);
        if (node) {
          node.textContent = String(message);
          const box = node.closest(".field");
          if (box) box.classList.add("invalid");
          if (!first && box) first = box.querySelector("input, textarea");
        } else {
          general.push(`${name}: ${message}`);
        }
      }
      if (general.length) show(formError, general.join(" · "));
      if (first) first.focus();
    }

    function finish(title, message, feedback = {}) {
      autosave.stop();
      fields.disabled = true;
      form.querySelector(".task-actions").hidden = true;
      form.querySelector(".keys")?.setAttribute("hidden", "");
      const result = document.getElementById("task-result");
      document.getElementById("result-title").textContent = title;
      document.getElementById("result-message").textContent = message;
      show(document.getElementById("result-feedback"), feedback.message);
      show(document.getElementById("result-warning"), feedback.warning);
      const next = document.getElementById("next-item");
      if (feedback.blocked) next.hidden = true;
      result.hidden = false;
      (feedback.blocked ? result : next).focus();
    }

    async function submit() {
      if (busy) return;
      busy = true;
      submitButton.disabled = true;
      submitButton.textContent = text("submitting", "Submitting…");
      clearErrors();
      autosave.stop();
      const seconds = clock.take();
      let answer;
      try {
        answer = await send(form.dataset.submitUrl, "POST", { data: collect(form), active_seconds: seconds });
      } catch (e) {
        answer = null;
      }
      if (answer && answer.ok) {
        const feedback = answer.data.feedback || {};
        finish(text("thankYou", "Thank you!"), feedback.blocked
          ? text("handedInEnded", "Your answer was handed in. Your participation in this study has ended.")
          : text("handedIn", "Your answer was handed in."), feedback);
        return;
      }
      busy = false;
      submitButton.disabled = false;
      submitButton.textContent = text("submit", "Submit");
      if (answer && answer.status === 409) {
        finish(text("itemClosed", "This item is closed"),
          answer.data.error || text("cannotSubmit", "This item can no longer be submitted."));
        return;
      }
      clock.giveBack(seconds);
      autosave.resume();
      if (!answer) {
        show(formError, text("connectionKept", "The connection failed; your answers are still here. Please try again."));
      } else {
        show(formError, answer.data.error
          || text("serverRefused", "The server refused the answers ({status}).", { status: answer.status }));
        if (answer.data.details) showErrors(answer.data.details);
      }
    }

    async function release() {
      if (busy) return;
      if (!window.confirm(text("confirmReturn", "Return this item? It goes back to the pool and you get another one."))) return;
      busy = true;
      releaseButton.disabled = true;
      autosave.stop();
      let answer;
      try { answer = await send(form.dataset.releaseUrl, "POST", {}); } catch (e) { answer = null; }
      if (answer && (answer.ok || answer.status === 409)) {
        finish(text("itemReturned", "Item returned"), answer.ok
          ? text("returned", "You returned this item; someone else will get it.")
          : (answer.data.error || text("noLongerYours", "This item is no longer yours.")));
        return;
      }
      busy = false;
      releaseButton.disabled = false;
      autosave.resume();
      show(formError, answer
        ? (answer.data.error || text("cannotReturn", "Could not return the item ({status}).", { status: answer.status }))
        : text("connectionFailed", "The connection failed. Please try again."));
    }

    submitButton.addEventListener("click", submit);
    releaseButton?.addEventListener("click", release);
    form.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submit();
      }
    });
  }

  /* ---- Completion page: back to MTurk or Prolific ---------------------------------------------- */

  function setupCompletion() {
    const mturk = document.querySelector("form[data-autosubmit]");
    if (mturk) {
      setTimeout(() => mturk.submit(), 800);
      return;
    }
    const link = document.querySelector("a[data-redirect-after]");
    if (link) setTimeout(() => window.location.assign(link.href), Number(link.dataset.redirectAfter) * 1000);
  }

  /* ---- Review queue: every decision goes through the REST endpoints ---------------------------- */

  function setupReview() {
    const root = document.getElementById("review-queue");
    if (!root) return;
    setupCounters(root);
    setupTimeMarks(root, { keys: false });  // a reviewer's edit of a marked moment: buttons only

    function markDecided(row, state, note) {
      const decided = row.querySelector("[data-decision]");
      const badge = row.querySelector("[data-decision-state]");
      badge.textContent = state === "approved" ? "Approved" : "Rejected";
      badge.className = `badge ${state === "approved" ? "ok" : "failed"}`;
      if (note) {
        const small = document.createElement("small");
        small.className = "hint";
        small.textContent = ` ${note}`;
        decided.append(small);
      }
      decided.hidden = false;
      row.querySelector("[data-actions]")?.remove();
      row.querySelector("details.edit")?.remove();
      countDecision(row, state);
      const box = row.querySelector(".row-select");
      if (box) { box.checked = false; box.disabled = true; }
      row.classList.add(`is-${state}`);
    }

    /* The tabs' counters follow each decision in place: the row leaves "pending" of every queue it
       is listed in and joins the decided state of the queue shown. */
    function bump(selector, by) {
      const counter = document.querySelector(selector);
      if (counter) counter.textContent = String(Math.max(0, Number(counter.textContent) + by));
    }

    function countDecision(row, state) {
      (row.dataset.queues || "").split(" ").filter(Boolean).forEach((queue) => {
        bump(`[data-pending-count="${queue}"]`, -1);
      });
      bump('[data-state-count="pending"]', -1);
      bump(`[data-state-count="${state}"]`, 1);
    }

    function readableDetails(details) {
      if (!details) return "";
      if (Array.isArray(details)) return ` ${details.join("; ")}`;
      if (typeof details === "object") {
        return ` ${Object.entries(details).map(([key, message]) => `${key}: ${message}`).join("; ")}`;
      }
      return ` ${details}`;
    }

    async function decide(row, action) {
      const error = row.querySelector("[data-row-error]");
      const reasonInput = row.querySelector("[data-reason]");
      const reason = reasonInput ? reasonInput.value.trim() : "";
      const criterionInput = row.querySelector("[data-criterion]");
      const criterion = criterionInput ? criterionInput.value : "";
      error.textContent = "";
      const body = { action, reason };
      if (action === "reject" && criterionInput) {
        if (!criterion) {
          error.textContent = "Choose the criterion this submission fails.";
          criterionInput.focus();
          return;
        }
        body.criterion = criterion;
      } else if (action === "reject" && !reason) {
        error.textContent = "A rejection needs a reason.";
        reasonInput.focus();
        return;
      }
      if (action === "edit") {
        const form = row.querySelector("[data-edit-form]");
        body.data = form.dataset.shape === "paths" ? collectPaths(form) : collect(form);
      }
      const buttons = row.querySelectorAll("[data-action]");
      buttons.forEach((b) => { b.disabled = true; });
      let answer;
      try { answer = await send(row.dataset.decideUrl, "POST", body); } catch (e) { answer = null; }
      if (answer && answer.ok) {
        const label = criterionInput && criterion ? criterionInput.selectedOptions[0].textContent : "";
        markDecided(row, answer.data.review_state === "rejected" ? "rejected" : "approved",
          action === "edit" ? "(edited)" : label);
        return;
      }
      buttons.forEach((b) => { b.disabled = false; });
      if (!answer) { error.textContent = "The connection failed. Please try again."; return; }
      error.textContent = (answer.data.error || `Refused (${answer.status}).`) + readableDetails(answer.data.details);
    }

    root.addEventListener("click", (event) => {
      const button = event.target.closest("[data-action]");
      if (button) decide(button.closest("tr"), button.dataset.action);
    });

    const selectAll = document.getElementById("select-all");
    selectAll?.addEventListener("change", () => {
      root.querySelectorAll(".row-select:not(:disabled)").forEach((box) => { box.checked = selectAll.checked; });
    });

    const status = document.getElementById("bulk-status");
    root.querySelectorAll("[data-bulk]").forEach((button) => {
      button.addEventListener("click", async () => {
        const action = button.dataset.bulk;
        const ids = Array.from(root.querySelectorAll(".row-select:checked"), (box) => Number(box.value));
        const reasonInput = document.getElementById("bulk-reason");
        const reason = reasonInput.value.trim();
        const criterionInput = document.getElementById("bulk-criterion");
        const criterion = criterionInput && action === "reject" ? criterionInput.value : "";
        if (!ids.length) { status.textContent = "Select at least one submission."; return; }
        if (action === "reject" && criterionInput && !criterion) {
          status.textContent = "Choose the criterion the selected submissions fail.";
          criterionInput.focus();
          return;
        }
        if (action === "reject" && !criterionInput && !reason) {
          status.textContent = "A rejection needs a reason.";
          reasonInput.focus();
          return;
        }
        button.disabled = true;
        status.textContent = "Working…";
        let answer;
        try {
          answer = await send(root.dataset.bulkUrl, "POST", { submission_ids: ids, action, reason, criterion });
        } catch (e) { answer = null; }
        button.disabled = false;
        if (!answer || !answer.ok) {
          status.textContent = answer ? (answer.data.error || `Refused (${answer.status}).`) : "The connection failed.";
          return;
        }
        const state = action === "approve" ? "approved" : "rejected";
        for (const id of answer.data.done) {
          const row = root.querySelector(`tr[data-submission-id="${id}"]`);
          if (row) markDecided(row, state, criterion ? criterionInput.selectedOptions[0].textContent : "");
        }
        const failed = Object.entries(answer.data.failed || {});
        for (const [id, message] of failed) {
          const row = root.querySelector(`tr[data-submission-id="${id}"]`);
          const error = row && row.querySelector("[data-row-error]");
          if (error) error.textContent = message;
        }
        if (selectAll) selectAll.checked = false;
        status.textContent = `${answer.data.done.length} ${state}` + (failed.length ? `, ${failed.length} failed` : "");
      });
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupTask();
    setupCompletion();
    setupReview();
  });
})();

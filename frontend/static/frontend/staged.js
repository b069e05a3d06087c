/* A BlackSwanSuite staged-reveal step (frontend/templates/blackswan/step.html): autosave of the
   step's own draft, active time, submitting the step (the next step's page is then loaded from the
   server, which alone decides what it shows), returning the item. No build step. */
"use strict";

(() => {
  const { send, show, text, ActiveClock, Autosave, localTimes } = window.CrowdWork;

  /* The step's answers as the server expects them (annotation.benchmarks.blackswan.staged.STEP_FIELDS):
     list fields hold one entry per hypothesis (null where nothing is chosen yet). */
  function collect(form) {
    const data = {};
    form.querySelectorAll("[data-list]").forEach((node) => {
      const key = node.dataset.list;
      if (!data[key]) data[key] = [null, null, null];
      const index = Number(node.dataset.index);
      if (node.type === "radio") {
        if (node.checked) data[key][index] = node.value;
      } else {
        data[key][index] = node.value;
      }
    });
    form.querySelectorAll("[data-key]").forEach((node) => { data[node.dataset.key] = node.value; });
    return data;
  }

  /* Detective: the new-hypothesis box of a forecast shows once it is marked invalid. */
  function setupNewHypotheses(form) {
    form.querySelectorAll('input[data-list="forecast_valid"]').forEach((radio) => {
      radio.addEventListener("change", () => {
        const box = form.querySelector(`[data-new-for="${radio.dataset.index}"]`);
        if (box) box.hidden = form.querySelector(`input[name="${radio.name}"]:checked`)?.value !== "no";
      });
    });
  }

  function setup() {
    localTimes(document);
    const form = document.getElementById("staged-form");
    if (!form) return;
    form.addEventListener("submit", (event) => event.preventDefault());
    setupNewHypotheses(form);
    if (!form.dataset.claimId) return;  // a preview

    const clock = new ActiveClock();
    const autosave = new Autosave(form, clock, document.getElementById("save-state"), collect,
      text("stepCannotChange", "this step can no longer change"));
    const submitButton = document.getElementById("submit-button");
    const submitLabel = submitButton.textContent;
    const releaseButton = document.getElementById("release-button");
    const formError = document.getElementById("form-error");
    const fields = document.getElementById("task-fields");
    let busy = false;

    /* An answer being corrected loses its error message. */
    function clearErrorOf(control) {
      const node = control?.name && form.querySelector(`[data-error-for="${CSS.escape(control.name)}"]`);
      if (!node || !node.textContent) return;
      node.textContent = "";
      const box = node.closest(".field");
      if (box && ![...box.querySelectorAll("[data-error-for]")].some((n) => n.textContent)) {
        box.classList.remove("invalid");
      }
      if (![...form.querySelectorAll("[data-error-for]")].some((n) => n.textContent)) show(formError, "");
    }

    form.addEventListener("input", (event) => { clearErrorOf(event.target); autosave.changed(); });
    form.addEventListener("change", (event) => { clearErrorOf(event.target); autosave.changed(); });
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
        if (!node) { general.push(`${name}: ${message}`); continue; }
        node.textContent = String(message);
        const box = node.closest(".field");
        if (box) box.classList.add("invalid");
        const control = node.closest(".field, .staged-new")?.querySelector("textarea, input");
        if (!first && control) first = control;
      }
      if (general.length) show(formError, general.join(" · "));
      if (first) first.focus();
    }

    function finish(title, message, feedback = {}) {
      autosave.stop();
      fields.disabled = true;
      form.querySelector(".task-actions").hidden = true;
      // a clean end: no stepper, lease line, players or questions any longer, only the result
      form.querySelectorAll("video").forEach((video) => video.pause());
      form.closest(".staged-page").classList.add("is-finished");
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

    function refused(message) {
      autosave.stop();
      fields.disabled = true;
      submitButton.disabled = true;
      show(formError, text("reloadToSee", "{message} Reload the page to see where this video stands.", { message }));
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
        if (answer.data.finished) {
          const feedback = answer.data.feedback || {};
          finish(text("thankYou", "Thank you!"), feedback.blocked
            ? text("stepsHandedInEnded", "All three steps are handed in. Your participation in this study has ended.")
            : text("stepsHandedIn", "All three steps of this video are handed in."), feedback);
        } else {
          fields.disabled = true;
          submitButton.textContent = text("openingNextStep", "Opening the next step…");
          window.location.assign(form.dataset.nextUrl);
        }
        return;
      }
      busy = false;
      submitButton.disabled = false;
      submitButton.textContent = submitLabel;
      if (answer && (answer.status === 409 || answer.status === 403 || answer.status === 404)) {
        refused(answer.data.error || text("stepCannotSubmit", "This step can no longer be submitted."));
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
      if (!window.confirm(text("confirmReturnVideo", "Return this video? It goes back to the pool and you get another one."))) {
        return;
      }
      busy = true;
      releaseButton.disabled = true;
      autosave.stop();
      let answer;
      try { answer = await send(form.dataset.releaseUrl, "POST", {}); } catch (e) { answer = null; }
      if (answer && (answer.ok || answer.status === 409)) {
        finish(text("videoReturned", "Video returned"), answer.ok
          ? text("returnedVideo", "You returned this video; someone else will get it.")
          : (answer.data.error || text("videoNoLongerYours", "This video is no longer yours.")));
        document.getElementById("result-earnings")?.setAttribute("hidden", "");
        return;
      }
      busy = false;
      releaseButton.disabled = false;
      autosave.resume();
      show(formError, answer
        ? (answer.data.error || text("cannotReturnVideo", "Could not return the video ({status}).", { status: answer.status }))
        : text("connectionFailed", "The connection failed. Please try again."));
    }

    submitButton.addEventListener("click", submit);
    releaseButton?.addEventListener("click", release);
    document.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submit();
      }
    });
  }

  document.addEventListener("DOMContentLoaded", setup);
})();

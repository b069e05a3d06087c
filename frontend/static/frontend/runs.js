/* Evaluation runs: live progress of unfinished runs (polled from /api/runs/<id>/progress/, the way
   app.js polls jobs), and the start form's choices narrowed to the chosen version's benchmark.
   Uses getJSON, el and setField from app.js (loaded first). */
"use strict";

(function () {
  const POLL_MS = 2000;

  function showProgress(node, run) {
    const status = node.querySelector('[data-field="status"]');
    if (status) status.replaceChildren(el("span", { class: `badge ${run.status}` }, run.status));
    if (status && status.tagName === "TD") status.title = run.message;
    node.querySelectorAll("progress").forEach((bar) => { bar.value = run.percent; });
    setField(node, "completed", String(run.completed_predictions));
    setField(node, "total", String(run.total_predictions));
    setField(node, "cached", String(run.cached_predictions));
    setField(node, "failed", String(run.failed_predictions));
    setField(node, "throughput", run.throughput ? `${run.throughput.toFixed(2)}/s` : "—");
    setField(node, "eta", run.eta || "—");
    setField(node, "message", run.message);
    if (run.finished_at) setField(node, "finished", formatWhen(run.finished_at, true));
  }

  async function pollOnce() {
    for (const node of document.querySelectorAll("[data-run-id]")) {
      let run;
      try { run = await getJSON(`/api/runs/${node.dataset.runId}/progress/`); } catch (e) { continue; }
      showProgress(node, run);
      if (run.is_finished) {
        delete node.dataset.runId;
        node.querySelectorAll("[data-hide-on-finish]").forEach((form) => { form.hidden = true; });
        // the run's page shows its predictions, history and buttons as they now are
        if (node.dataset.reloadOnFinish !== undefined) window.location.reload();
      }
    }
    return document.querySelectorAll("[data-run-id]").length > 0;
  }

  function watchRuns() {
    const tick = async () => {
      if (await pollOnce()) setTimeout(tick, POLL_MS);
    };
    setTimeout(tick, POLL_MS);
  }

  /* Only the input strategies, prompting strategies and variants of the chosen version's benchmark. */
  function narrowChoices() {
    const version = document.getElementById("run-version");
    if (!version) return;
    const apply = () => {
      const benchmark = version.selectedOptions[0]?.dataset.benchmark;
      document.querySelectorAll("#run-form [data-benchmarks]").forEach((node) => {
        const fits = !benchmark || node.dataset.benchmarks.split(" ").includes(benchmark);
        node.hidden = !fits;
        if (node.tagName === "OPTION") {
          node.disabled = !fits;
          if (!fits && node.selected) node.selected = false;
        } else {
          node.querySelectorAll("input").forEach((box) => { box.disabled = !fits; if (!fits) box.checked = false; });
        }
      });
      for (const id of ["run-input", "run-prompting"]) {
        const select = document.getElementById(id);
        if (select && select.selectedOptions[0]?.disabled) {
          const first = [...select.options].find((option) => !option.disabled);
          if (first) first.selected = true;
        }
      }
    };
    version.addEventListener("change", apply);
    apply();
  }

  document.addEventListener("DOMContentLoaded", () => {
    narrowChoices();
    if (document.querySelector("[data-run-id]")) watchRuns();
  });
})();

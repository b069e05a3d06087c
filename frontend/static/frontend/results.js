/* Results pages, a version's page and a job's page: when a job finishes (app.js sends "job-finished"), show an export's
   download link or an imported run's link, and reload the page after a judge, scoring or baseline job so its metrics appear. */
document.addEventListener("job-finished", (event) => {
  const node = event.target;
  const job = event.detail;
  if (job.status !== "succeeded") return;
  const slot = node.querySelector('[data-field="download"]');
  if (slot && job.result && job.result.download_url) {
    const link = document.createElement("a");
    link.href = job.result.download_url;
    link.className = "export-download";
    link.textContent = `Download ${job.result.file_name || ""}`.trim();
    slot.replaceChildren(link);
  } else if (slot && job.result && job.result.run_url) {
    const link = document.createElement("a");
    link.href = job.result.run_url;
    link.className = slot.tagName === "P" ? "button run-link" : "run-link";
    link.textContent = `Open run #${job.result.run}`;
    slot.replaceChildren(link);
  }
  if (node.hasAttribute("data-reload-when-done")) window.location.reload();
});

/* Results pages and a version's page: when a job started there finishes (app.js sends "job-finished"), show an export's
   download link, and reload the page after a judge, scoring or baseline job so its metrics appear. */
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
  }
  if (node.hasAttribute("data-reload-when-done")) window.location.reload();
});

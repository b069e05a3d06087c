/* What the crowd work pages share (task.js: form studies; staged.js: BlackSwanSuite's staged
   steps): JSON requests with the CSRF token, active time, and the autosave of a draft. Loaded before
   them; `csrfToken` comes from app.js. No build step. */
"use strict";

window.CrowdWork = (() => {
  const SAVE_DELAY_MS = 800;
  const RETRY_DELAY_MS = 5000;

  /* Requests ask for the page's language, so the server's messages match the page. */
  function jsonHeaders() {
    return { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken(),
      "Accept-Language": document.documentElement.lang || "en" };
  }

  /* A text of the page's language from #work-messages (crowd/_work_messages.html), else `fallback`;
     `{name}` in it is replaced by values[name]. */
  function text(key, fallback, values = {}) {
    const node = document.getElementById("work-messages");
    let out = (node && node.dataset[key]) || fallback;
    for (const [name, value] of Object.entries(values)) out = out.split(`{${name}}`).join(String(value));
    return out;
  }

  /* fetch with JSON in and out; network failures throw, HTTP errors come back with ok=false. */
  async function send(url, method, body) {
    const response = await fetch(url, {
      method, credentials: "same-origin", headers: jsonHeaders(),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {}; }
    return { ok: response.ok, status: response.status, data };
  }

  function show(node, text) {
    if (!node) return;
    node.textContent = text || "";
    node.hidden = !text;
  }

  /* ---- Active time: counts only while the page is visible and focused ------------------------ */

  class ActiveClock {
    constructor() {
      this.totalMs = 0;
      this.since = null;
      const update = () => this.update();
      document.addEventListener("visibilitychange", update);
      window.addEventListener("focus", update);
      window.addEventListener("blur", update);
      window.addEventListener("pageshow", update);
      this.update();
    }

    isActive() {
      return document.visibilityState === "visible" && document.hasFocus();
    }

    update() {
      const now = performance.now();
      if (this.since !== null) this.totalMs += now - this.since;
      this.since = this.isActive() ? now : null;
    }

    peek() {
      this.update();
      return this.totalMs / 1000;
    }

    /* The seconds gathered since the last take(); the counter starts again from zero. */
    take() {
      const seconds = this.peek();
      this.totalMs = 0;
      return Math.round(seconds * 1000) / 1000;
    }

    giveBack(seconds) {
      this.totalMs += seconds * 1000;
    }
  }

  /* ---- Autosave: debounced PUT of the draft, and a last keepalive save when the page goes away --- */

  class Autosave {
    /* `collect(form)` gives the answers to save; `closed` is the reason shown once the saved thing can
       no longer change (default: the item's). */
    constructor(form, clock, stateNode, collect, closed = text("cannotChange", "this item can no longer change")) {
      this.form = form;
      this.collect = collect;
      this.closed = closed;
      this.url = form.dataset.draftUrl;
      this.clock = clock;
      this.stateNode = stateNode;
      this.timer = null;
      this.inFlight = false;
      this.again = false;
      this.dirty = false;
      this.stopped = false;
    }

    state(text, kind = "") {
      if (!this.stateNode) return;
      this.stateNode.textContent = text;
      this.stateNode.dataset.state = kind;
    }

    changed() {
      if (this.stopped) return;
      this.dirty = true;
      this.state(text("unsaved", "Unsaved changes"), "pending");
      this.schedule(SAVE_DELAY_MS);
    }

    schedule(delay) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.save(), delay);
    }

    async save() {
      clearTimeout(this.timer);
      this.timer = null;
      if (this.stopped) return;
      if (this.inFlight) { this.again = true; return; }
      this.inFlight = true;
      this.dirty = false;
      const seconds = this.clock.take();
      this.state(text("saving", "Saving…"), "pending");
      try {
        const answer = await send(this.url, "PUT", { data: this.collect(this.form), active_seconds: seconds });
        if (answer.ok) {
          if (!this.dirty) this.state(text("saved", "Saved"), "ok");
        } else if (answer.status === 409 || answer.status === 403 || answer.status === 404) {
          this.stopped = true;  // the item is no longer this worker's to change
          const reason = answer.data.error || this.closed;
          this.state(text("notSaved", "Not saved: {reason}", { reason }), "bad");
        } else {
          this.dirty = true;
          const reason = answer.data.error || text("errorStatus", "error {status}", { status: answer.status });
          this.state(text("notSaved", "Not saved: {reason}", { reason }), "bad");
        }
      } catch (e) {
        this.clock.giveBack(seconds);
        this.dirty = true;
        this.state(text("notSavedRetry", "Not saved (connection problem); trying again…"), "bad");
        this.schedule(RETRY_DELAY_MS);
      } finally {
        this.inFlight = false;
        if (this.again) { this.again = false; this.save(); }
      }
    }

    /* The page is hidden or left: send what is there now; keepalive lets the request outlive the page. */
    flush() {
      if (this.stopped) return;
      if (!this.dirty && this.clock.peek() < 1) return;
      clearTimeout(this.timer);
      this.timer = null;
      const seconds = this.clock.take();
      const body = JSON.stringify({ data: this.collect(this.form), active_seconds: seconds });
      this.dirty = false;
      fetch(this.url, { method: "PUT", keepalive: true, credentials: "same-origin", headers: jsonHeaders(), body })
        .then((response) => { if (response.ok && !this.dirty) this.state(text("saved", "Saved"), "ok"); })
        .catch(() => { this.dirty = true; });
    }

    stop() {
      this.stopped = true;
      clearTimeout(this.timer);
      this.timer = null;
    }

    resume() {
      this.stopped = false;
    }
  }

  /* Times are written in the server's zone; show them in the worker's own. */
  function localTimes(root) {
    root.querySelectorAll("time[datetime][data-local]").forEach((node) => {
      const when = new Date(node.getAttribute("datetime"));
      if (!Number.isNaN(when.getTime())) {
        node.textContent = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      }
    });
  }

  return { jsonHeaders, send, show, text, ActiveClock, Autosave, localTimes };
})();

// The study set-up pages: a form builder with a live preview over the `form_schema` JSON field, and
// Markdown previews of the instructions and the consent page. The JSON field stays the truth that is
// posted: the builder only writes it, and without JavaScript it can be edited by hand.
(function () {
  "use strict";

  var TYPES = {
    single_choice: "Single choice",
    multi_select: "Several choices",
    likert: "Scale (Likert)",
    free_text: "Free text",
    yes_no_statements: "Yes / no statements",
    time_mark: "Moment in the video",
  };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "checked" || key === "disabled" || key === "value") node[key] = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function lines(text) {
    return String(text || "").split("\n").map(function (s) { return s.trim(); }).filter(Boolean);
  }

  function optionTexts(list) {
    return (list || []).map(function (o) { return typeof o === "object" && o ? (o.text || o.id) : String(o); });
  }

  function newField(type, index) {
    var field = { name: "question_" + index, type: type, label: "" };
    if (type === "single_choice") { field.options = ["yes", "no"]; field.explanation = "none"; }
    if (type === "multi_select") { field.options = ["first", "second"]; field.min_selected = 0; }
    if (type === "likert") { field.min = 1; field.max = 5; field.labels = {}; }
    if (type === "free_text") { field.min_length = 1; field.max_length = 2000; }
    if (type === "yes_no_statements") { field.statements = ["A statement"]; }
    if (type === "time_mark") { field.duration_from = "duration"; field.fps_from = "fps"; }
    return field;
  }

  function labelled(text, input) {
    return el("label", { class: "builder-input" }, [el("span", { text: text }), input]);
  }

  function Builder(textarea) {
    this.textarea = textarea;
    this.fields = [];
    this.root = el("div", { class: "form-builder", "data-form-builder": "" });
    this.editors = el("ol", { class: "builder-fields" });
    this.preview = el("div", { class: "builder-preview", "data-form-preview": "", "aria-live": "polite" });
    this.problem = el("p", { class: "field-error", "data-builder-error": "" });
    var adder = el("select", { "aria-label": "Type of the new field" });
    Object.keys(TYPES).forEach(function (type) { adder.appendChild(el("option", { value: type, text: TYPES[type] })); });
    var self = this;
    var add = el("button", { type: "button", text: "Add field" });
    add.addEventListener("click", function () {
      self.fields.push(newField(adder.value, self.fields.length + 1));
      self.changed(true);
    });
    this.root.appendChild(el("div", { class: "two-col" }, [
      el("div", {}, [el("h3", { text: "Fields" }), this.editors, el("p", { class: "builder-add" }, [adder, add]),
        this.problem]),
      el("div", {}, [el("h3", { text: "Preview: what a worker sees" }), this.preview]),
    ]));
    textarea.parentNode.insertBefore(this.root, textarea);
    var raw = el("details", { class: "builder-json" }, [el("summary", { text: "Form as JSON" })]);
    textarea.parentNode.insertBefore(raw, textarea);
    raw.appendChild(textarea);
    textarea.addEventListener("change", function () { self.load(); });
    this.load();
  }

  Builder.prototype.load = function () {
    var text = this.textarea.value.trim();
    this.problem.textContent = "";
    try {
      var schema = text ? JSON.parse(text) : {};
      this.fields = Array.isArray(schema.fields) ? schema.fields : [];
    } catch (err) {
      this.problem.textContent = "The JSON below cannot be read: " + err.message;
      this.fields = [];
    }
    this.changed(true);
  };

  Builder.prototype.changed = function (redraw) {
    this.textarea.value = this.fields.length ? JSON.stringify({ fields: this.fields }, null, 2) : "";
    if (redraw) this.drawEditors();
    this.drawPreview();
  };

  Builder.prototype.drawEditors = function () {
    var self = this;
    this.editors.textContent = "";
    this.fields.forEach(function (field, index) { self.editors.appendChild(self.editor(field, index)); });
  };

  Builder.prototype.editor = function (field, index) {
    var self = this;
    var n = index + 1;
    var prefix = "Field " + n + " ";
    var box = el("li", { class: "builder-field card", "data-builder-field": String(n) });
    function input(key, label, attrs, convert) {
      var node = el("input", Object.assign({ type: "text", "aria-label": prefix + label }, attrs || {}));
      node.value = field[key] === undefined ? "" : String(field[key]);
      node.addEventListener("input", function () {
        field[key] = convert ? convert(node.value) : node.value;
        self.changed(false);
      });
      return labelled(label, node);
    }
    function number(key, label) {
      return input(key, label, { type: "number" }, function (v) { return v === "" ? undefined : Number(v); });
    }
    function list(key, label, help) {
      var node = el("textarea", { rows: "3", "aria-label": prefix + label });
      node.value = optionTexts(field[key]).join("\n");
      node.addEventListener("input", function () { field[key] = lines(node.value); self.changed(false); });
      return labelled(label + " " + help, node);
    }
    function select(key, label, choices) {
      var node = el("select", { "aria-label": prefix + label });
      choices.forEach(function (c) { node.appendChild(el("option", { value: c[0], text: c[1] })); });
      node.value = field[key] || choices[0][0];
      node.addEventListener("change", function () { field[key] = node.value; self.changed(false); });
      return labelled(label, node);
    }
    function check(label, isOn, set) {
      var node = el("input", { type: "checkbox", "aria-label": prefix + label, checked: isOn });
      node.addEventListener("change", function () { set(node.checked); self.changed(false); });
      return el("label", { class: "builder-check" }, [node, el("span", { text: " " + label })]);
    }
    var type = el("select", { "aria-label": prefix + "type" });
    Object.keys(TYPES).forEach(function (t) { type.appendChild(el("option", { value: t, text: TYPES[t] })); });
    type.value = field.type;
    type.addEventListener("change", function () {
      var fresh = newField(type.value, n);
      fresh.name = field.name; fresh.label = field.label;
      self.fields[index] = fresh;
      self.changed(true);
    });
    var up = el("button", { type: "button", text: "↑", "aria-label": prefix + "up", disabled: index === 0 });
    up.addEventListener("click", function () {
      self.fields.splice(index - 1, 0, self.fields.splice(index, 1)[0]);
      self.changed(true);
    });
    var remove = el("button", { type: "button", text: "Remove", "aria-label": "Remove field " + n });
    remove.addEventListener("click", function () { self.fields.splice(index, 1); self.changed(true); });
    box.appendChild(el("div", { class: "builder-head" }, [el("strong", { text: "Field " + n }), up, remove]));
    box.appendChild(labelled("Type", type));
    box.appendChild(input("label", "label"));
    box.appendChild(input("name", "name (stored with the answers)"));
    if (field.type === "single_choice" || field.type === "multi_select") {
      box.appendChild(list("options", "options", "(one per line)"));
    }
    if (field.type === "single_choice") {
      box.appendChild(select("explanation", "explanation", [["none", "no explanation"],
        ["optional", "optional explanation"], ["required", "required explanation"]]));
      box.appendChild(check("ask how certain", !!field.certainty, function (on) { field.certainty = on; }));
    }
    if (field.type === "multi_select") {
      box.appendChild(check("required (at least one)", (field.min_selected || 0) > 0,
        function (on) { field.min_selected = on ? 1 : 0; }));
    }
    if (field.type === "free_text") {
      box.appendChild(check("required", field.min_length === undefined || field.min_length > 0,
        function (on) { field.min_length = on ? Math.max(1, field.min_length || 1) : 0; }));
      box.appendChild(number("max_length", "at most (characters)"));
    }
    if (field.type === "likert") {
      box.appendChild(number("min", "lowest value"));
      box.appendChild(number("max", "highest value"));
    }
    if (field.type === "yes_no_statements") {
      box.appendChild(list("statements", "statements", "(one per line)"));
    }
    if (field.type === "time_mark") {
      box.appendChild(input("duration_from", "item key holding the video's duration (s)"));
      box.appendChild(input("fps_from", "item key holding its frame rate"));
      box.appendChild(number("max", "latest moment without a duration (s)"));
      box.appendChild(input("none_label", "\"nothing to mark\" checkbox (empty: none)"));
    }
    return box;
  };

  Builder.prototype.drawPreview = function () {
    var preview = this.preview;
    preview.textContent = "";
    if (!this.fields.length) {
      preview.appendChild(el("p", { class: "empty", text: "Add a field to see the form." }));
      return;
    }
    this.fields.forEach(function (field, index) {
      var group = "preview-" + index;
      var box = el("fieldset", { class: "field", "data-preview-field": field.name || "" });
      box.appendChild(el("legend", { class: "field-label", text: (field.label || field.name || "(no label)") }));
      function choice(kind, text) {
        return el("label", { class: "choice" }, [el("input", { type: kind, name: group }), el("span", { text: " " + text })]);
      }
      if (field.type === "single_choice" || field.type === "multi_select") {
        optionTexts(field.options).forEach(function (text) {
          box.appendChild(choice(field.type === "single_choice" ? "radio" : "checkbox", text));
        });
        if (field.type === "single_choice" && field.explanation && field.explanation !== "none") {
          box.appendChild(el("textarea", { rows: "2", placeholder: "Explain your choice (" + field.explanation + ")" }));
        }
      } else if (field.type === "likert") {
        var scale = el("div", { class: "likert" });
        for (var v = Number(field.min || 1); v <= Number(field.max || 5) && v - Number(field.min || 1) < 20; v++) {
          scale.appendChild(choice("radio", String(v)));
        }
        box.appendChild(scale);
      } else if (field.type === "free_text") {
        box.appendChild(el("textarea", { rows: "3", maxlength: String(field.max_length || 2000) }));
        box.appendChild(el("p", { class: "hint", text: (field.min_length === 0 ? "optional · " : "required · ") +
          "at most " + (field.max_length || 2000) + " characters" }));
      } else if (field.type === "yes_no_statements") {
        optionTexts(field.statements).forEach(function (text, i) {
          box.appendChild(el("p", {}, [el("span", { text: text + " " }),
            el("label", {}, [el("input", { type: "radio", name: group + "-" + i }), el("span", { text: " yes " })]),
            el("label", {}, [el("input", { type: "radio", name: group + "-" + i }), el("span", { text: " no" })])]));
        });
      } else if (field.type === "time_mark") {
        box.appendChild(el("p", {}, ["◀ One frame back", "One frame on ▶", "Mark this moment"].map(function (text) {
          return el("button", { type: "button", text: text });
        })));
        box.appendChild(el("input", { type: "number", step: "0.001", min: "0",
          "aria-label": "marked moment (seconds)" }));
        if (field.none_label) box.appendChild(choice("checkbox", field.none_label));
      } else {
        box.appendChild(el("p", { class: "field-error", text: "unknown field type " + field.type }));
      }
      preview.appendChild(box);
    });
  };

  function markdownPreview(textarea, url, token) {
    var pane = el("div", { class: "markdown markdown-preview", "data-markdown-preview": "", "aria-live": "polite" });
    textarea.parentNode.insertBefore(el("div", { class: "hint", text: "Preview:" }), textarea.nextSibling);
    textarea.parentNode.insertBefore(pane, textarea.nextSibling.nextSibling);
    var timer = null;
    function refresh() {
      var body = new URLSearchParams({ text: textarea.value });
      fetch(url, { method: "POST", body: body, credentials: "same-origin",
                   headers: { "X-CSRFToken": token } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) { pane.innerHTML = html; })  // rendered and sanitised by the server
        .catch(function () { pane.textContent = "The preview is not available right now."; });
    }
    textarea.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refresh, 300); });
    refresh();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-confirm]");
    if (button && !window.confirm(button.getAttribute("data-confirm"))) event.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.querySelector("[data-study-setup]");
    if (!form) return;
    var token = (form.querySelector("[name=csrfmiddlewaretoken]") || {}).value || "";
    var schema = form.querySelector("[data-form-schema]");
    if (schema) {
      new Builder(schema);
      var kind = form.querySelector("[name=step_kind]");
      var formKinds = (form.getAttribute("data-form-kinds") || "").split(",");
      var row = schema.closest("[data-field]");
      var sync = function () { if (kind && row) row.hidden = formKinds.indexOf(kind.value) < 0; };
      if (kind) kind.addEventListener("change", sync);
      sync();
    }
    var outputRow = form.querySelector('[data-field="output_version"]');
    var kindInput = form.querySelector("[name=step_kind]");
    if (outputRow && kindInput) {
      var outputKinds = (form.getAttribute("data-output-kinds") || "").split(",");
      var syncOutput = function () { outputRow.hidden = outputKinds.indexOf(kindInput.value) < 0; };
      kindInput.addEventListener("change", syncOutput);
      syncOutput();
    }
    form.querySelectorAll("textarea[data-markdown]").forEach(function (area) {
      markdownPreview(area, form.getAttribute("data-preview-url"), token);
    });
  });
})();

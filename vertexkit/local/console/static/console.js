// The console's only script: follows a running pipeline run, and a running training job's logs,
// without reloading the page.
// A run page names its state URL in <main data-live>; the script polls it every second and
// updates each task's node (class and state text) and the run's state, until the run ends.
// A running job's page names its log URL in <section id="logs" data-logs>; each <pre data-log>
// holds one file's text up to data-offset; the script asks for what follows and appends it.
"use strict";

(function () {
  const main = document.querySelector("main[data-live]");
  if (!main) return;
  const url = main.getAttribute("data-live");

  function setBadge(element, state) {
    element.textContent = state;
    element.className = "badge state-" + state;
  }

  function apply(view) {
    document.querySelectorAll("svg.dag g.task").forEach(function (node) {
      const state = view.tasks[node.getAttribute("data-task")];
      if (!state) return;
      const selected = node.classList.contains("selected") ? " selected" : "";
      node.setAttribute("class", "task state-" + state + selected);
      node.setAttribute("data-state", state);
      node.querySelector("text.state").textContent = (view.labels || {})[node.getAttribute("data-task")] || state;
    });
    const badge = document.querySelector("#run-state .badge");
    if (badge) setBadge(badge, view.state);
    const duration = document.getElementById("run-duration");
    if (duration) duration.textContent = view.duration;
    if (!view.running) {
      document.querySelectorAll("form.action button.danger").forEach(function (button) {
        button.disabled = true;
      });
    }
  }

  function poll() {
    fetch(url, { cache: "no-store", credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (view) {
        apply(view);
        if (view.running) setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 2000); });
  }

  setTimeout(poll, 1000);
})();

(function () {
  const section = document.querySelector("section#logs[data-logs]");
  if (!section) return;
  const url = section.getAttribute("data-logs");

  function query() {
    const params = new URLSearchParams();
    section.querySelectorAll("pre[data-log]").forEach(function (pre) {
      params.append("from", pre.getAttribute("data-log") + ":" + pre.getAttribute("data-offset"));
    });
    return url + "?" + params.toString();
  }

  function preFor(file) {
    const known = Array.from(section.querySelectorAll("pre[data-log]")).find(function (pre) {
      return pre.getAttribute("data-log") === file;
    });
    if (known) return known;
    const empty = section.querySelector("p.empty");
    if (empty) empty.remove();
    const title = document.createElement("h3");
    title.textContent = file;
    const pre = document.createElement("pre");
    pre.className = "log";
    pre.setAttribute("data-log", file);
    pre.setAttribute("data-offset", "0");
    section.append(title, pre);
    return pre;
  }

  function append(chunk) {
    const pre = preFor(chunk.file);
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    if (chunk.skipped) pre.append("\n… (" + chunk.skipped + " bytes not shown)\n");
    pre.append(chunk.text);
    pre.setAttribute("data-offset", String(chunk.offset));
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  }

  function poll() {
    fetch(query(), { cache: "no-store", credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (view) {
        view.logs.forEach(append);
        const badge = document.querySelector("#job-state .badge");
        if (badge) {
          badge.textContent = view.state;
          badge.className = "badge state-" + view.state;
        }
        if (view.running) setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 2000); });
  }

  setTimeout(poll, 1000);
})();

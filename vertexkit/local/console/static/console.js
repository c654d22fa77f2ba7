// The console's only script: follows a running pipeline run without reloading the page.
// The page names its state URL in <main data-live>; the script polls it every second and
// updates each task's node (class and state text) and the run's state, until the run ends.
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
      node.querySelector("text.state").textContent = state;
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

// The console's one script: live regions follow the hub's Server-Sent Events and fetch the
// region's server-rendered HTML again when something changed. No framework, no network
// beyond this hub; the pages work without it (forms post and redirect).
"use strict";

(function () {
  function stateName(value) {
    return String(value || "").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
  }

  // One line per status update, built with textContent: event text is never parsed as HTML.
  function logStatus(list, data) {
    var event;
    try {
      event = JSON.parse(data);
    } catch (error) {
      return;
    }
    var update = event.statusUpdate || (event.task && { status: event.task.status });
    if (!list || !update || !update.status) {
      return;
    }
    var item = document.createElement("li");
    var text = stateName(update.status.state);
    if (update.status.timestamp) {
      text += " at " + update.status.timestamp;
    }
    item.textContent = text;
    list.appendChild(item);
  }

  function follow(region) {
    var log = region.dataset.statusLog ? document.getElementById(region.dataset.statusLog) : null;
    var busy = false;
    var again = false;

    function reload() {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      fetch(region.dataset.fragment, { credentials: "same-origin", cache: "no-store" })
        .then(function (response) {
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          if (html !== null) {
            // Rendered and escaped by the hub's templates; the CSP allows no inline script.
            region.innerHTML = html;
            region.dataset.updated = String(Date.now());
          }
        })
        .catch(function () {})
        .then(function () {
          busy = false;
          if (again) {
            again = false;
            reload();
          }
        });
    }

    var source = new EventSource(region.dataset.events);
    source.onopen = function () {
      region.dataset.following = "yes";
    };
    source.onmessage = function (message) {
      logStatus(log, message.data);
      reload();
    };
    source.addEventListener("end", function () {
      source.close();
      region.dataset.following = "ended";
      reload();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var regions = document.querySelectorAll("[data-events]");
    for (var i = 0; i < regions.length; i += 1) {
      follow(regions[i]);
    }
  });
})();

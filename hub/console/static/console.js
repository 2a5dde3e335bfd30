// The console's one script: live regions follow the hub's Server-Sent Events and fetch the
// region's server-rendered HTML again when something changed. No framework, no network
// beyond this hub; the pages work without it (forms post and redirect).
"use strict";

(function () {
  function stateName(value) {
    return String(value || "").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
  }

  function statusOf(data) {
    var event;
    try {
      event = JSON.parse(data);
    } catch (error) {
      return null;
    }
    var update = event.statusUpdate || (event.task && { status: event.task.status });
    return update && update.status ? update.status : null;
  }

  function messageText(message) {
    var texts = [];
    var parts = (message && message.parts) || [];
    for (var i = 0; i < parts.length; i += 1) {
      if (typeof parts[i].text === "string") {
        texts.push(parts[i].text);
      }
    }
    return texts.join("\n");
  }

  // The new state and status text at once, from the event itself; the rest of the region
  // follows when it is fetched again. textContent only: event text is never parsed as HTML.
  function showStatus(region, status) {
    var state = region.querySelector("#task-state");
    var text = region.querySelector("#status-text");
    if (state) {
      state.textContent = stateName(status.state);
      state.className = "state " + stateName(status.state);
    }
    if (text) {
      text.textContent = messageText(status.message);
    }
    region.dataset.shown = String(Date.now());
  }

  // One line per status update the page heard.
  function logStatus(list, status) {
    if (!list) {
      return;
    }
    var item = document.createElement("li");
    var text = stateName(status.state);
    if (status.timestamp) {
      text += " at " + status.timestamp;
    }
    item.textContent = text;
    list.appendChild(item);
  }

  // Swap in a region's new HTML, keeping what the visitor typed in its forms (an answer
  // being written survives an update of the task around it) and the collapsible parts
  // (`details` with an id) the visitor opened.
  function swap(region, html) {
    var opened = [];
    var open = region.querySelectorAll("details[id][open]");
    for (var k = 0; k < open.length; k += 1) {
      opened.push(open[k].id);
    }
    var typed = [];
    var fields = region.querySelectorAll("form[id] input[name], form[id] textarea[name]");
    for (var i = 0; i < fields.length; i += 1) {
      var field = fields[i];
      if (field.type !== "hidden" && field.value) {
        typed.push([field.form.id, field.name, field.value, field === document.activeElement]);
      }
    }
    region.innerHTML = html;
    for (var m = 0; m < opened.length; m += 1) {
      var details = document.getElementById(opened[m]);
      if (details && region.contains(details)) {
        details.open = true;
      }
    }
    for (var j = 0; j < typed.length; j += 1) {
      var form = document.getElementById(typed[j][0]);
      var again = form ? form.elements.namedItem(typed[j][1]) : null;
      if (again && again.type !== "hidden") {
        again.value = typed[j][2];
        if (typed[j][3]) {
          again.focus();
        }
      }
    }
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
            swap(region, html);
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
      region.dataset.heard = String(Date.now());
      var status = statusOf(message.data);
      if (status) {
        showStatus(region, status);
        logStatus(log, status);
      }
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

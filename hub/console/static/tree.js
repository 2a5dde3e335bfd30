// A task page's delegation tree as a live region of its own: it follows the tree's events
// (a partner's branch changed, while the hub task itself may not have) and fetches the
// tree's server-rendered HTML again; between changes, a running branch's time goes on
// counting. The task's own region may render the tree again too: the tree is always found
// by its id. textContent only: nothing from a partner is parsed as HTML here.
"use strict";

(function () {
  function region() {
    return document.getElementById("tree");
  }

  function final(tree) {
    return !tree || tree.dataset.treeFinal === "yes";
  }

  // A running branch's time: what the hub said when it rendered, plus the time since.
  function tick() {
    var tree = region();
    if (!tree) {
      return;
    }
    if (!tree.dataset.shownAt) {
      tree.dataset.shownAt = String(performance.now());
    }
    var elapsed = (performance.now() - Number(tree.dataset.shownAt)) / 1000;
    var times = tree.querySelectorAll("[data-so-far]");
    for (var i = 0; i < times.length; i += 1) {
      times[i].textContent = (Number(times[i].dataset.soFar) + elapsed).toFixed(1) + " s";
    }
  }

  function follow(tree) {
    var busy = false;
    var again = false;
    var source = null;

    // On the body, which outlives every rendering of the tree.
    function following(how) {
      document.body.dataset.treeFollowing = how;
    }

    function stop() {
      if (source) {
        source.close();
        source = null;
      }
      following("ended");
    }

    function reload() {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      fetch(tree.dataset.treeFragment, { credentials: "same-origin", cache: "no-store" })
        .then(function (response) {
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          var current = region();
          if (html === null || !current) {
            return;
          }
          // Rendered and escaped by the hub's templates; the CSP allows no inline script.
          var holder = document.createElement("template");
          holder.innerHTML = html;
          var fresh = holder.content.querySelector("#tree");
          if (!fresh) {
            return;
          }
          fresh.dataset.shownAt = String(performance.now());
          fresh.dataset.updated = String(Date.now());
          current.replaceWith(fresh);
          if (final(fresh)) {
            stop();
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

    source = new EventSource(tree.dataset.treeEvents);
    source.onopen = function () {
      following("yes");
    };
    source.onmessage = function () {
      reload();
    };
    source.addEventListener("end", function () {
      stop();
      reload();
    });
    window.setInterval(function () {
      tick();
      if (source && final(region())) {
        stop();
      }
    }, 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var tree = region();
    if (tree && tree.dataset.treeEvents && !final(tree)) {
      follow(tree);
    }
  });
})();

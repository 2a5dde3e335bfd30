// The task list's relative times ("2 min ago") stay true while the page is open: each
// <time class="ago"> is worded again from its datetime every 30 seconds, by the rules of
// hub/console/elapsed.py's `ago`. Only textContent is written.
(function () {
  "use strict";
  var MINUTE = 60, HOUR = 3600, DAY = 86400;

  function ago(seconds) {
    if (seconds < -10) return "in the future";
    if (seconds < 10) return "just now";
    if (seconds < MINUTE) return seconds + " s ago";
    if (seconds < HOUR) return Math.floor(seconds / MINUTE) + " min ago";
    if (seconds < DAY) return Math.floor(seconds / HOUR) + " h ago";
    return Math.floor(seconds / DAY) + " d ago";
  }

  function refresh() {
    var now = Date.now();
    document.querySelectorAll("time.ago[datetime]").forEach(function (node) {
      var moment = Date.parse(node.getAttribute("datetime"));
      if (!isNaN(moment)) node.textContent = ago(Math.trunc((now - moment) / 1000));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (document.querySelector("time.ago")) window.setInterval(refresh, 30000);
  });
})();

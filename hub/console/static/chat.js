// The chat page: each turn is posted to the hub, which sends it with SendStreamingMessage
// and streams back its A2A events (StreamResponse JSON, as the A2A endpoints send them).
// They are shown as chat bubbles and, raw, in the event inspector beside the chat. Every
// string from an event is set with textContent, never parsed as HTML. Without this script
// the form posts to the hub and lands on the task's page.
"use strict";

(function () {
  var KINDS = ["task", "statusUpdate", "artifactUpdate", "message"];
  var WAITING = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"];
  var FAILED = ["TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"];
  var ROUTED = ["skill:delegate", "skill:swarm"];

  function stateName(value) {
    return String(value || "").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function clock(date) {
    return date.toISOString().slice(11, 23);
  }

  function kindOf(event) {
    for (var i = 0; i < KINDS.length; i += 1) {
      if (event && event[KINDS[i]]) {
        return KINDS[i];
      }
    }
    return "unknown";
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

  // A text chunk continues the text before it when both are text with the same media type,
  // file name and metadata: the rule the hub joins streamed chunks by
  // (hub/protocol/artifact_text.py).
  function continuesText(part, more) {
    return (
      typeof part.text === "string" &&
      typeof more.text === "string" &&
      part.mediaType === more.mediaType &&
      part.filename === more.filename &&
      JSON.stringify(part.metadata) === JSON.stringify(more.metadata)
    );
  }

  // `parts` followed by `more` (an append: true chunk), its first part joined into the last
  // of `parts` when its text continues it.
  function appendParts(parts, more) {
    var joined = parts.slice();
    for (var i = 0; i < more.length; i += 1) {
      var last = joined[joined.length - 1];
      if (i === 0 && last && continuesText(last, more[0])) {
        joined[joined.length - 1] = Object.assign({}, last, { text: last.text + more[0].text });
      } else {
        joined.push(more[i]);
      }
    }
    return joined;
  }

  function partNode(part) {
    if (typeof part.text === "string") {
      return element("div", "text", part.text);
    }
    if (part.data !== undefined) {
      return element("pre", "data", JSON.stringify(part.data, null, 2));
    }
    var name = part.filename || part.url || "file";
    var node = element("div", "file");
    if (typeof part.url === "string" && /^https?:\/\//i.test(part.url)) {
      var link = element("a", "", name);
      link.href = part.url;
      link.rel = "noopener noreferrer";
      node.appendChild(link);
    } else {
      node.appendChild(element("span", "", name));
    }
    if (part.mediaType) {
      node.appendChild(document.createTextNode(" "));
      node.appendChild(element("span", "muted", part.mediaType));
    }
    return node;
  }

  // The parts of a bubble; a run of text parts that continue one another is one text.
  function showParts(box, parts) {
    box.textContent = "";
    var last = null;
    var lastNode = null;
    for (var i = 0; i < parts.length; i += 1) {
      var part = parts[i];
      if (last && lastNode && continuesText(last, part)) {
        lastNode.textContent += part.text;
      } else {
        lastNode = partNode(part);
        box.appendChild(lastNode);
      }
      last = part;
    }
  }

  function Chat(root) {
    this.root = root;
    this.form = document.getElementById("chat-form");
    this.log = document.getElementById("chat-log");
    this.turns = document.getElementById("inspector-turns");
    this.empty = document.getElementById("inspector-empty");
    this.error = document.getElementById("chat-error");
    this.waiting = document.getElementById("chat-waiting");
    this.context = document.getElementById("chat-context");
    this.restart = document.getElementById("new-conversation");
    this.routing = document.getElementById("chat-routing");
    this.csrf = document.body.dataset.csrf || "";
    this.ui = root.dataset.ui || "";
    this.maxBody = Number(root.dataset.maxBody) || 0;
    this.busy = null;
    this.reset();
  }

  Chat.prototype.field = function (name) {
    return this.form.elements.namedItem(name);
  };

  // A new conversation: a new context, nothing waiting, an empty log and inspector.
  Chat.prototype.reset = function () {
    if (this.busy) {
      this.busy.abort();
      this.busy = null;
      this.root.dataset.busy = "";
    }
    this.count = 0;
    this.contextId = "";
    this.waitingTask = "";
    this.agent = "";
    this.artifacts = {};
    this.shown = {};
    this.log.textContent = "";
    this.turns.textContent = "";
    this.empty.hidden = false;
    this.field("context_id").value = "";
    this.field("task_id").value = "";
    this.showConversation();
  };

  Chat.prototype.showConversation = function () {
    this.root.dataset.context = this.contextId;
    this.root.dataset.task = this.waitingTask;
    this.root.dataset.turns = String(this.count);
    this.context.textContent = this.contextId
      ? "Context " + this.contextId
      : "A new conversation.";
    this.restart.hidden = !this.contextId && this.count === 0;
    this.waiting.hidden = !this.waitingTask;
    this.waiting.textContent = this.waitingTask
      ? "The task " + this.waitingTask + " waits for your answer: your next message answers it."
      : "";
  };

  Chat.prototype.showRouting = function () {
    this.routing.hidden = ROUTED.indexOf(this.field("target").value) < 0;
  };

  Chat.prototype.complain = function (text) {
    this.error.textContent = text;
    this.error.hidden = !text;
  };

  // The size of what the form would send, against limits.max_body, before it is sent.
  Chat.prototype.oversized = function () {
    if (!this.maxBody) {
      return "";
    }
    var size = 0;
    var files = this.field("files").files || [];
    for (var i = 0; i < files.length; i += 1) {
      size += files[i].size;
    }
    ["text", "metadata", "data"].forEach(
      function (name) {
        size += new Blob([this.field(name).value]).size;
      }.bind(this)
    );
    if (size <= this.maxBody) {
      return "";
    }
    return (
      "refused: the message and its files are " + size + " bytes; the limit is " +
      this.maxBody + " bytes (limits.max_body)"
    );
  };

  Chat.prototype.taskPath = function (taskId) {
    var where = this.agent ? "/agents/" + encodeURIComponent(this.agent) : "";
    return this.ui + where + "/tasks/" + encodeURIComponent(taskId);
  };

  // What the visitor sent, as its bubble: the text, and what was attached.
  Chat.prototype.userBubble = function (turn) {
    var bubble = element("div", "bubble user");
    var text = this.field("text").value.trim();
    if (text) {
      bubble.appendChild(element("div", "text", text));
    }
    var attached = [];
    if (this.field("metadata").value.trim()) {
      attached.push("metadata");
    }
    if (this.field("data").value.trim()) {
      attached.push("data part");
    }
    var files = this.field("files").files || [];
    for (var i = 0; i < files.length; i += 1) {
      attached.push("file " + files[i].name);
    }
    if (attached.length) {
      bubble.appendChild(element("div", "attached muted", "attached: " + attached.join(", ")));
    }
    turn.node.appendChild(bubble);
  };

  Chat.prototype.startTurn = function () {
    this.count += 1;
    var started = new Date();
    var target = this.field("target");
    var label = target.options[target.selectedIndex]
      ? target.options[target.selectedIndex].textContent
      : target.value;
    var turn = {
      number: this.count,
      started: started,
      events: 0,
      state: "",
      taskId: "",
      node: element("li", "turn"),
      bar: element("div", "turn-bar muted"),
      chip: element("span", "state", "sending"),
      list: element("ol", "events"),
      summary: element("summary"),
      tally: element("span", "muted", "0 events"),
    };
    turn.node.dataset.turn = String(turn.number);
    this.userBubble(turn);
    turn.bar.appendChild(turn.chip);
    turn.node.appendChild(turn.bar);
    this.log.appendChild(turn.node);

    var previous = this.turns.querySelectorAll("details.turn-events");
    for (var i = 0; i < previous.length; i += 1) {
      previous[i].open = false;
    }
    var entry = element("li");
    entry.dataset.turn = String(turn.number);
    var details = element("details", "turn-events");
    details.open = true;
    turn.summary.appendChild(
      document.createTextNode("Turn " + turn.number + " · " + label + " · " + clock(started) + " · ")
    );
    turn.summary.appendChild(turn.tally);
    details.appendChild(turn.summary);
    details.appendChild(turn.list);
    entry.appendChild(details);
    this.turns.appendChild(entry);
    this.empty.hidden = true;
    return turn;
  };

  // One event in the inspector: its kind, when it came, and its JSON.
  Chat.prototype.inspect = function (turn, kind, event) {
    var now = new Date();
    turn.events += 1;
    turn.tally.textContent = turn.events + (turn.events === 1 ? " event" : " events");
    var item = element("li", "event");
    item.dataset.kind = kind;
    var details = element("details");
    var summary = element("summary");
    summary.appendChild(element("span", "kind", kind));
    summary.appendChild(document.createTextNode(" "));
    summary.appendChild(element("time", "", clock(now)));
    summary.appendChild(document.createTextNode(" "));
    summary.appendChild(element("span", "muted", "+" + (now - turn.started) + " ms"));
    details.appendChild(summary);
    // It scrolls: focusable, so a keyboard can scroll it too.
    var json = element("pre", "event-json", JSON.stringify(event, null, 2));
    json.tabIndex = 0;
    json.setAttribute("aria-label", kind + " event");
    details.appendChild(json);
    item.appendChild(details);
    turn.list.appendChild(item);
  };

  Chat.prototype.bubble = function (turn, className, text) {
    var node = element("div", "bubble " + className, text);
    turn.node.appendChild(node);
    this.log.scrollTop = this.log.scrollHeight;
    return node;
  };

  Chat.prototype.noteTask = function (turn, taskId, contextId) {
    if (contextId) {
      this.contextId = contextId;
    }
    if (taskId && !turn.taskId) {
      turn.taskId = taskId;
      var link = element("a", "task-link", "task " + taskId);
      link.href = this.taskPath(taskId);
      turn.bar.appendChild(document.createTextNode(" "));
      turn.bar.appendChild(link);
    }
  };

  // A status: the turn's state, and its message once (a progress report, the question the
  // task waits on, or why it failed).
  Chat.prototype.showStatus = function (turn, status) {
    if (!status) {
      return;
    }
    turn.state = status.state || turn.state;
    turn.chip.textContent = stateName(turn.state);
    turn.chip.className = "state " + stateName(turn.state);
    turn.node.dataset.state = stateName(turn.state);
    var message = status.message;
    var text = messageText(message);
    if (!text || (message.messageId && this.shown[message.messageId])) {
      return;
    }
    if (message.messageId) {
      this.shown[message.messageId] = true;
    }
    if (WAITING.indexOf(turn.state) >= 0) {
      this.bubble(turn, "agent question", text);
    } else if (FAILED.indexOf(turn.state) >= 0) {
      this.bubble(turn, "error", stateName(turn.state) + ": " + text);
    } else {
      this.bubble(turn, "progress muted", text);
    }
  };

  // An artifact, or a chunk of one: chunks sent with append: true join the artifact's parts.
  Chat.prototype.showArtifact = function (turn, taskId, artifact, append) {
    var key = taskId + "/" + artifact.artifactId;
    var shown = this.artifacts[key];
    if (!shown) {
      shown = { parts: [], node: this.bubble(turn, "agent") };
      shown.node.dataset.artifact = artifact.artifactId;
      this.artifacts[key] = shown;
    }
    shown.parts = append ? appendParts(shown.parts, artifact.parts || []) : artifact.parts || [];
    showParts(shown.node, shown.parts);
    this.log.scrollTop = this.log.scrollHeight;
  };

  Chat.prototype.showEvent = function (turn, event) {
    var kind = kindOf(event);
    this.inspect(turn, kind, event);
    if (kind === "task") {
      var task = event.task;
      this.noteTask(turn, task.id, task.contextId);
      this.showStatus(turn, task.status);
      // Artifacts no event of this conversation has shown (a partner that does not stream
      // answers with its whole task).
      var artifacts = task.artifacts || [];
      for (var i = 0; i < artifacts.length; i += 1) {
        if (!this.artifacts[task.id + "/" + artifacts[i].artifactId]) {
          this.showArtifact(turn, task.id, artifacts[i], false);
        }
      }
    } else if (kind === "statusUpdate") {
      var update = event.statusUpdate;
      this.noteTask(turn, update.taskId, update.contextId);
      this.showStatus(turn, update.status);
    } else if (kind === "artifactUpdate") {
      var chunk = event.artifactUpdate;
      this.noteTask(turn, chunk.taskId, chunk.contextId);
      this.showArtifact(turn, chunk.taskId, chunk.artifact, chunk.append);
    } else if (kind === "message") {
      var reply = event.message;
      if (reply.contextId) {
        this.contextId = reply.contextId;
      }
      var node = this.bubble(turn, "agent");
      showParts(node, reply.parts || []);
      turn.chip.textContent = "replied";
      turn.node.dataset.state = "replied";
    }
  };

  // One Server-Sent Event frame: `data:` lines hold an event, `event: end` closes the turn.
  Chat.prototype.frame = function (turn, frame) {
    var name = "message";
    var data = [];
    var lines = frame.split("\n");
    for (var i = 0; i < lines.length; i += 1) {
      var line = lines[i];
      if (line.indexOf("event:") === 0) {
        name = line.slice(6).trim();
      } else if (line.indexOf("data:") === 0) {
        data.push(line.slice(5).replace(/^ /, ""));
      }
    }
    if (name !== "message" || !data.length) {
      return;
    }
    var event;
    try {
      event = JSON.parse(data.join("\n"));
    } catch (error) {
      return;
    }
    this.showEvent(turn, event);
  };

  Chat.prototype.read = function (turn, response) {
    var chat = this;
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          return;
        }
        buffer += decoder.decode(chunk.value, { stream: true });
        var frames = buffer.split("\n\n");
        buffer = frames.pop();
        for (var i = 0; i < frames.length; i += 1) {
          chat.frame(turn, frames[i]);
        }
        return pump();
      });
    }
    return pump();
  };

  // The turn is over: the conversation goes on in its context, and in its task when that
  // waits for an answer.
  Chat.prototype.endTurn = function (turn) {
    if (!turn.events && !turn.node.dataset.state) {
      turn.node.dataset.state = "refused";
      turn.chip.textContent = "refused";
      turn.chip.className = "state failed";
    }
    this.waitingTask = WAITING.indexOf(turn.state) >= 0 ? turn.taskId : "";
    this.field("context_id").value = this.contextId;
    this.field("task_id").value = this.waitingTask;
    turn.node.dataset.done = "yes";
    this.showConversation();
  };

  Chat.prototype.clearComposer = function () {
    this.field("text").value = "";
    this.field("data").value = "";
    this.field("files").value = "";
  };

  Chat.prototype.send = function () {
    var problem = this.oversized();
    this.complain(problem);
    if (problem || this.busy) {
      return;
    }
    var chat = this;
    var body = new FormData(this.form);
    var target = this.field("target");
    this.agent = target.value.indexOf("agent:") === 0 ? target.value.slice(6) : "";
    var turn = this.startTurn();
    var control = new AbortController();
    this.busy = control;
    this.root.dataset.busy = "yes";
    fetch(this.root.dataset.turn, {
      method: "POST",
      body: body,
      headers: { "X-CSRF-Token": this.csrf },
      credentials: "same-origin",
      cache: "no-store",
      signal: control.signal,
    })
      .then(function (response) {
        if (!response.ok) {
          return response.text().then(function (text) {
            chat.bubble(turn, "error", text || "refused: HTTP " + response.status);
          });
        }
        var type = response.headers.get("Content-Type") || "";
        if (type.indexOf("text/event-stream") !== 0) {
          // A sign-in page, after the session ended: the turn was not sent.
          chat.bubble(turn, "error", "refused: the session has ended; reload the page");
          return null;
        }
        chat.clearComposer();
        return chat.read(turn, response);
      })
      .catch(function (error) {
        if (!control.signal.aborted) {
          chat.bubble(turn, "error", "the hub could not be reached: " + error.message);
        }
      })
      .then(function () {
        if (chat.busy === control) {
          chat.busy = null;
          chat.root.dataset.busy = "";
          chat.endTurn(turn);
        }
      });
  };

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("chat");
    if (!root) {
      return;
    }
    var chat = new Chat(root);
    chat.showRouting();
    chat.form.addEventListener("submit", function (event) {
      event.preventDefault();
      chat.send();
    });
    chat.field("target").addEventListener("change", function () {
      chat.showRouting();
      // The context is the one talked to: another target is another conversation.
      if (chat.count) {
        chat.reset();
      }
    });
    chat.restart.addEventListener("click", function () {
      chat.reset();
      chat.complain("");
    });
    root.dataset.ready = "yes";
  });
})();

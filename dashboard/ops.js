// ops.js - operator downloads on the dashboard: the selected task's export
// bundle (GET /api/tasks/{id}/export) in the task header, and a dump of
// every task of a window (GET /api/dump?since=) in the top bar. Standalone:
// it reads the selected task from the task list (li.sel[data-id]) and adds
// its own buttons, so app.js needs no change. Downloads are plain links:
// the browser streams the ZIP to disk as detmd builds it, and the session
// cookie (set by /dashboard?token=) goes with them.
(() => {
  "use strict";

  const selected = () => {
    const li = document.querySelector("#tasks li.sel[data-id]");
    return li ? li.dataset.id : null;
  };

  const download = (href) => {
    const a = document.createElement("a");
    a.href = href;
    a.download = "";
    a.hidden = true;
    document.body.append(a);
    a.click();
    a.remove();
  };

  const button = (id, label, title, onclick) => {
    const b = document.createElement("button");
    b.id = id;
    b.type = "button";
    b.textContent = label;
    b.title = title;
    b.addEventListener("click", onclick);
    return b;
  };

  const exportButton = () => button("b-export", "Export",
    "Download this task's bundle: task, actions, thread, waits, screenshots, recording and log lines (ZIP)",
    () => {
      const id = selected();
      if (id && /^[0-9a-f]{8}$/.test(id)) download(`/api/tasks/${id}/export`);
    });

  const dumpControls = () => {
    const span = document.createElement("span");
    span.className = "ops-dump";
    const sel = document.createElement("select");
    sel.id = "dump-window";
    sel.setAttribute("aria-label", "Dump window");
    for (const [v, t] of [["3600", "last hour"], ["86400", "last 24 h"], ["604800", "last 7 days"], ["0", "everything"]]) {
      const o = document.createElement("option");
      o.value = v;
      o.textContent = t;
      if (v === "86400") o.selected = true;
      sel.append(o);
    }
    span.append(sel, button("b-dump", "Dump logs",
      "Download every task of the window, the errors and the log as one ZIP, secrets redacted",
      () => {
        const secs = Number(sel.value);
        const since = secs ? Math.floor(Date.now() / 1000) - secs : 0;
        download(`/api/dump?since=${since}`);
      }));
    return span;
  };

  const init = () => {
    const controls = document.querySelector("#task .controls");
    if (controls && !document.getElementById("b-export")) controls.append(exportButton());
    const top = document.querySelector("header.top");
    if (top && !document.getElementById("b-dump")) top.append(dumpControls());
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

// The trace stepper: steps through a replayed path, shows every node's
// state after the step (fields the step changed marked), the step's event
// (the critical step marked) and, beside the path, the nearest live path
// with the states' differences marked. It reads /api/doc/N/trace once and
// /api/doc/N/state per step.
"use strict";
(function () {
  const root = document.getElementById("stepper");
  if (!root) return;
  const api = "/api/doc/" + root.dataset.doc;
  let info = null, step = 0;
  const $ = (id) => document.getElementById(id);

  async function getJSON(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(url + ": " + r.status + " " + (await r.text()));
    return r.json();
  }
  async function stateAt(path, i) {
    if (!info.states || i < 0) return null;
    if (path === "live" && (!info.live || i > info.live.length)) return null;
    return getJSON(api + "/state?path=" + path + "&step=" + i);
  }
  function listSteps(ol, steps, critical) {
    ol.replaceChildren();
    steps.forEach((s, k) => {
      const li = document.createElement("li");
      li.textContent = s.text;
      li.dataset.step = k + 1;
      if (k + 1 === critical) li.classList.add("critical");
      li.addEventListener("click", () => go(k + 1));
      ol.appendChild(li);
    });
  }
  // fieldsDiv renders fields one a line, each marked with the class of
  // every mark set that holds it.
  function fieldsDiv(fields, marks) {
    const d = document.createElement("div");
    fields.forEach((f) => {
      const p = document.createElement("div");
      p.className = "field";
      p.textContent = f;
      for (const m of marks) if (m.has(f)) p.classList.add(m.cls);
      d.appendChild(p);
    });
    return d;
  }
  // marked is the set of fields not in other (none without other).
  function marked(fields, other, cls) {
    const s = new Set(other ? fields.filter((f) => !other.includes(f)) : []);
    s.cls = cls;
    return s;
  }
  function renderStates(now, before, live) {
    const out = $("states");
    out.replaceChildren();
    if (!now) {
      out.textContent = info.states ? "" : "this file holds fingerprints, not states: step with 'crystalball trace debug' to re-run it";
      return;
    }
    now.forEach((n, k) => {
      const box = document.createElement("div");
      box.className = "node";
      box.dataset.node = n.node;
      const h = document.createElement("h4");
      h.textContent = n.node;
      box.appendChild(h);
      const side = document.createElement("div");
      side.className = "side";
      const prev = before ? before[k].fields : null;
      const dead = fieldsDiv(n.fields, [marked(n.fields, prev, "changed"), marked(n.fields, live && live[k].fields, "differs")]);
      dead.className = "dead";
      side.appendChild(dead);
      if (live) {
        // Two columns: say which is which.
        const title = (text) => { const h5 = document.createElement("h5"); h5.textContent = text; return h5; };
        dead.prepend(title("dead path"));
        const l = fieldsDiv(live[k].fields, [marked(live[k].fields, n.fields, "differs")]);
        l.prepend(title("nearest live path"));
        l.className = "live";
        side.appendChild(l);
        if (live[k].fields.join("\n") !== n.fields.join("\n")) box.classList.add("has-diff");
      }
      box.appendChild(side);
      out.appendChild(box);
    });
  }
  async function go(i) {
    if (!info) return;
    step = Math.max(0, Math.min(i, info.steps.length));
    history.replaceState(null, "", "#step=" + step); // a link to the step shown
    $("step-no").textContent = step;
    const ev = $("event");
    ev.classList.toggle("critical", step > 0 && step === info.critical);
    ev.textContent = step === 0 ? "the start state" :
      step + ". " + info.steps[step - 1].text + (step === info.critical ? "   ← critical transition" : "");
    if (info.live && step > 0 && step <= info.live.length && info.live[step - 1].text !== info.steps[step - 1].text) {
      ev.textContent += "   (live path: " + info.live[step - 1].text + ")";
    }
    for (const ol of [$("dead-steps"), $("live-steps")]) {
      ol.querySelectorAll("li").forEach((li) => {
        const current = Number(li.dataset.step) === step;
        li.classList.toggle("current", current);
        if (current) li.scrollIntoView({block: "nearest"}); // the list scrolls, not the page
      });
    }
    try {
      const [now, before, live] = await Promise.all([stateAt("dead", step), stateAt("dead", step - 1), stateAt("live", step)]);
      renderStates(now, before, live);
      root.dataset.shown = String(step);
    } catch (e) {
      $("states").textContent = String(e);
    }
  }
  async function start() {
    try {
      info = await getJSON(api + "/trace");
    } catch (e) {
      $("event").textContent = String(e);
      return;
    }
    $("step-count").textContent = info.steps.length;
    listSteps($("dead-steps"), info.steps, info.critical);
    if (info.live) {
      $("dead-title").textContent = "dead path";
      $("live-column").hidden = false;
      listSteps($("live-steps"), info.live, 0);
    }
    if (info.critical > 0) {
      $("critical").hidden = false;
      $("critical").addEventListener("click", () => go(info.critical));
    }
    if (info.graph_error) $("graph").textContent = "no event graph: " + info.graph_error;
    $("first").addEventListener("click", () => go(0));
    $("prev").addEventListener("click", () => go(step - 1));
    $("next").addEventListener("click", () => go(step + 1));
    $("last").addEventListener("click", () => go(info.steps.length));
    document.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight") go(step + 1);
      else if (e.key === "ArrowLeft") go(step - 1);
    });
    const linked = /^#step=(\d+)$/.exec(location.hash);
    go(linked ? Number(linked[1]) : 0);
  }
  start();
})();

// The catalogue's index: search and filters over the JSON the page carries. Plain DOM, no
// library and no network, so the page works opened from disk (file://).
"use strict";

(function () {
  const source = document.getElementById("catalogue-data");
  if (!source) return; // an entry's page: nothing to search
  const entries = JSON.parse(source.textContent);
  const $ = (id) => document.getElementById(id);
  const controls = ["search", "kind", "task", "plugin", "installed", "pretrained", "portable"];

  function fill(select, values) {
    for (const value of [...new Set(values)].filter(Boolean).sort()) {
      select.append(new Option(value, value));
    }
  }
  fill($("task"), entries.map((e) => e.task));
  fill($("plugin"), entries.map((e) => e.plugin));

  // "yes", "no" or "" (either) against a true/false field
  const allows = (choice, value) => choice === "" || (choice === "yes") === Boolean(value);

  function matches(entry, words) {
    const text = [entry.name, entry.plugin, entry.task, entry.description, ...(entry.tags || [])]
      .join(" ").toLowerCase();
    return words.every((w) => text.includes(w)); // every word, as `gluon-hub search` does
  }

  function cell(row, text, href) {
    const td = row.insertCell();
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      td.append(a);
    } else {
      td.textContent = text === null || text === undefined ? "-" : text;
    }
  }

  function count(n) {
    if (n === null || n === undefined) return "-";
    for (const [scale, suffix] of [[1e9, "B"], [1e6, "M"], [1e3, "K"]]) {
      if (n >= scale) return (n / scale).toFixed(1) + suffix;
    }
    return String(n);
  }

  function render() {
    const kind = $("kind").value;
    const models = kind === "models";
    $("pretrained").disabled = $("portable").disabled = !models;
    const words = $("search").value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = entries.filter((e) =>
      e.kind === kind && matches(e, words) &&
      ($("task").value === "" || e.task === $("task").value) &&
      ($("plugin").value === "" || e.plugin === $("plugin").value) &&
      allows($("installed").value, e.installed) &&
      (!models || (allows($("pretrained").value, e.pretrained) && allows($("portable").value, e.portable))));
    const head = $("results").tHead;
    head.innerHTML = "";
    const titles = models ? ["name", "plugin", "task", "params", "top-1 %", "installed", "portable"]
      : ["name", "plugin", "task", "description", "installed"];
    const headRow = head.insertRow();
    for (const title of titles) headRow.append(Object.assign(document.createElement("th"), {textContent: title}));
    const body = $("results").tBodies[0];
    body.innerHTML = "";
    for (const e of shown) {
      const row = body.insertRow();
      row.dataset.id = e.id;
      cell(row, e.name, e.page);
      cell(row, e.plugin);
      cell(row, e.task);
      if (models) {
        cell(row, count(e.num_params));
        cell(row, e.top1);
      } else {
        cell(row, e.description);
      }
      cell(row, e.installed ? "yes" : "no");
      if (models) cell(row, e.portable ? "yes" : "no");
    }
    const total = entries.filter((e) => e.kind === kind).length;
    $("count").textContent = `${shown.length} of ${total} ${kind}`;
  }

  for (const id of controls) $(id).addEventListener("input", render);
  render();
})();

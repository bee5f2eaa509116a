"""The catalogue's HTML: an index page searched and filtered in the browser, and one page per
model, dataset, embedding and vocabulary. Every text is escaped; the data the index's script reads is JSON inside the
page, and the script and style sheet are files beside it, so the site opens from disk
(``file://``) and asks nothing of the network."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..cli._table import human_count, human_size, plural
from ._data import gather, summary

ASSETS = Path(__file__).with_name("assets")


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _json_script(element_id: str, data: Any) -> str:
    """Data for the page's script; ``<``, ``>`` and ``&`` escaped so no text ends the element."""
    text = json.dumps(data, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _link(url: str | None, text: str | None = None) -> str:
    """A link for web addresses only (never ``javascript:``); anything else as plain text."""
    if not url:
        return "-"
    if url.split(":", 1)[0].lower() in ("http", "https"):
        return f'<a href="{_e(url)}">{_e(text or url)}</a>'
    return _e(url)


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table of already-escaped cells."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _page(title: str, depth: int, body: str) -> str:
    up = "../" * depth
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)} · gluon-hub catalogue</title>"
            f'<link rel="stylesheet" href="{up}assets/catalogue.css"></head>\n<body>'
            f'<header><a href="{up}index.html">gluon-hub catalogue</a></header><main>{body}</main>'
            f'<script src="{up}assets/catalogue.js"></script></body></html>\n')


def _badges(entry: dict[str, Any]) -> str:
    badges = ['<span class="badge yes">installed</span>' if entry["installed"]
              else '<span class="badge no">not installed</span>']
    if entry.get("pretrained"):
        badges.append('<span class="badge yes">pretrained</span>')
    if entry.get("portable"):
        badges.append('<span class="badge yes">portable (ONNX)</span>')
    return " ".join(badges)


def _header(entry: dict[str, Any]) -> str:
    install = ""
    if not entry["installed"]:
        install = f"<p>Install its plugin: <code>{_e(entry['install'])}</code></p>"
    elif entry["status"] != "loaded":
        install = f"<p>Its plugin is {_e(entry['status'])} (<code>gluon-hub plugins</code> says why).</p>"
    facts = [("Plugin", _e(entry["plugin"]) + (f" ({_e(entry['distribution'])})" if entry["distribution"] else "")),
             ("Task", _e(entry["task"] or "-")), ("License", _e(entry["license"] or "-")),
             ("Paper", _link(entry["paper"]))]
    if entry["kind"] == "models":
        facts.insert(2, ("Parameters", _e(human_count(entry["num_params"]))))
    if entry["tags"]:
        facts.append(("Tags", _e(", ".join(entry["tags"]))))
    rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    return (f'<h1 id="name">{_e(entry["name"])}</h1><p class="badges">{_badges(entry)}</p>'
            f'<p class="description">{_e(entry["description"])}</p>{install}<table class="facts">{rows}</table>')


def _file_rows(file: dict[str, Any]) -> str:
    facts = [("Hash", f"<code>{_e(file['hash'])}</code>"), ("Size", _e(human_size(file["size"]) if file["size"]
                                                                      else "not recorded"))]
    if file["filename"]:
        facts.append(("File", f"<code>{_e(file['filename'])}</code>"))
    if file["extract"]:
        facts.append(("Member", f"<code>{_e(file['extract'])}</code> (extracted from the archive)"))
    if file["archive_hash"]:
        facts.append(("Archive hash", f"<code>{_e(file['archive_hash'])}</code>"))
    sources = "".join(f"<li><code>{_e(s)}</code></li>" for s in file["sources"]) or "<li>none configured</li>"
    facts.append(("From", f"<ol>{sources}</ol>"))
    return "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)


def _input_cell(key: str, value: Any) -> str:
    if key == "shape" and value:
        return "x".join("?" if d is None else str(d) for d in value)
    return "-" if value in (None, "", []) else str(value)


def _inputs(entry: dict[str, Any]) -> str:
    keys = ("shape", "layout", "dtype", "mean", "std", "resize", "crop", "num_classes")
    rows = [[_e(_input_cell(k, i[k])) for k in keys] for i in entry["inputs"]]
    out = _table(("shape (no batch axis)", "layout", "dtype", "mean", "std", "resize", "crop", "classes"), rows) if rows \
        else "<p>The spec declares no input.</p>"
    if entry["output_shape"] is not None:
        out += f"<p>Output shape (without the batch axis): <code>{_e(tuple(entry['output_shape']))}</code></p>"
    labels = entry["labels"]
    path = entry["inputs"][0]["labels"] if entry["inputs"] else None
    if labels:
        items = "".join(f"<li>{_e(label)}</li>" for label in labels)
        out += f'<details><summary>{len(labels)} labels</summary><ol class="labels" start="0">{items}</ol></details>'
    elif path:
        out += f"<p>Labels: <code>{_e(path)}</code> (install the plugin to see them)</p>"
    return out


def _weights(entry: dict[str, Any]) -> str:
    if not entry["weights"]:
        return "<p>No published weights: <code>pretrained=False</code> builds it with random ones.</p>"
    parts = []
    for w in entry["weights"]:
        metrics = _table(("metric", "value", "dataset", "split", "source"), [
            (_e(m["name"]), _e(m["value"]), _e(m["dataset"]), _e(m["split"]), _link(m["source"]))
            for m in w["metrics"]]) if w["metrics"] else "<p>No reported metrics.</p>"
        about = f"<p>{_e(w['description'])}</p>" if w["description"] else ""
        parts.append(f'<section class="weights"><h3>Tag <code>{_e(w["tag"])}</code></h3>{about}'
                     f'<table class="facts">{_file_rows(w["file"])}</table>{metrics}</section>')
    return "".join(parts)


def _portability(entry: dict[str, Any]) -> str:
    """The ONNX row of the portability matrix, the int8 variant, and the deploy command."""
    row = entry["onnx"]
    if row is None:
        facts = [("ONNX", "not measured: <code>gluon-hub portability NAME --write</code> (gluon-hub-deploy) "
                          "measures it")]
    else:
        facts = [("ONNX", _e(row["status"]) + (f": {_e(row['blocker'])}" if row["blocker"] else "")),
                 ("Opset", _e(row["opset"] or "-")),
                 ("Inputs", f"<code>{_e(row['inputs'] or '-')}</code> (? is dynamic)"),
                 ("Max relative difference from MXNet",
                  _e(f"{row['max_rel_diff']:.1e}" if row["max_rel_diff"] is not None else "-"))]
        if not row["current"]:
            facts.append(("Note", "measured on an older spec; run <code>gluon-hub portability NAME --write</code> "
                                  "again"))
    if entry["int8"]:
        int8 = f'<code>{_e(entry["int8"])}</code> (quantized at load by gluon-hub-deploy)'
    elif entry["int8_of"]:
        int8 = f'this is the int8 variant of <code>{_e(entry["int8_of"])}</code>'
    else:
        int8 = "no int8 entry"
    facts.append(("int8", int8))
    facts.append(("C++, Java, Clojure", f'<code>gluon-hub deploy {_e(entry["use"])} --lang cpp</code> (MXNet\'s C '
                                        "predict API; not measured per model: every layer must hybridize)"))
    return '<table class="facts">' + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts) + "</table>"


def _usage(entry: dict[str, Any]) -> str:
    name, pretrained = entry["use"], ("True" if entry["pretrained"] else "False")
    first: dict[str, Any] = entry["inputs"][0] if entry["inputs"] else {}
    load = f'net = gluon_hub.load("{name}", pretrained={pretrained})\n'
    mxnet = "import gluon_hub\n\n" + load
    if len(entry["inputs"]) == 1 and first["shape"] and None not in first["shape"] and first["layout"][:1] == "N":
        shape = ", ".join(str(d) for d in [1, *first["shape"]])  # a batch of one, batch axis first
        mxnet = ("import gluon_hub\nimport mxnet as mx\n\n" + load
                 + f"y = net(mx.nd.zeros(({shape}), dtype=\"{first['dtype']}\"))  # {first['layout']}\n")
    onnx_file = f"{entry['name']}.onnx"
    export = (f'# where MXNet is installed, once (needs gluon-hub-deploy):\nimport gluon_hub\n\n'
              f'gluon_hub.export("{name}", "{onnx_file}", format="onnx", pretrained={pretrained})\n\n')
    if entry["runner"]:
        runtime = (export + '# anywhere, without MXNet: pip install "gluon-hub[onnxruntime]"\n'
                   f'import gluon_hub.runtime\n\nmodel = gluon_hub.runtime.load("{name}", "{onnx_file}")\n'
                   + _RUNNER_CALLS.get(entry["runner"].rpartition(":")[2], _RUNNER_CALLS.get(entry["task"], "")))
    else:
        runtime = (export + '# anywhere, without MXNet: pip install onnxruntime\nimport onnxruntime\n\n'
                   f'session = onnxruntime.InferenceSession("{onnx_file}")\n'
                   'print([(i.name, i.shape) for i in session.get_inputs()])\n')
    onnx = entry["onnx"]
    note = ""
    if onnx is None or onnx["status"] != "exportable":
        note = ("<p class=\"note\">Its ONNX export is "
                + ("blocked (see Portability above)" if onnx else "not measured yet") + ".</p>")
    return (f'<h2>Use it with MXNet</h2><pre><code id="usage-mxnet">{_e(mxnet)}</code></pre>'
            f'<h2>Use it without MXNet</h2>{note}<pre><code id="usage-runtime">{_e(runtime)}</code></pre>')


#: How a task's runner (``gluon_hub.runtime.load``) is called on a photograph or text (docs/onnx.md).
_RUNNER_CALLS = {
    "image-classification": 'print(model.classify(["photo.jpg"], topk=5))\n',
    "object-detection": '((image, boxes),) = model.detect(["photo.jpg"], threshold=0.5)\n'
                        'model.draw(image, boxes, "boxes.png")\n',
    "semantic-segmentation": '((image, class_map, num_classes),) = model.segment(["photo.jpg"])\n'
                             'model.draw(image, class_map, num_classes, "mask.png")\n',
    "pose-estimation": 'finder = gluon_hub.runtime.load("yolo3_mobilenet1.0_coco", "persons.onnx")  # a COCO detector\n'
                       '((image, persons),) = model.predict(["photo.jpg"], finder, threshold=0.5)\n'
                       'model.draw(image, persons, "skeletons.png")\n',
    "action-recognition": 'print(model.classify(["video.mp4"], topk=5))  # decord reads the video\n',
    "depth-estimation": '((image, depth),) = model.estimate(["photo.jpg"])  # pose networks: model.motion(a, b)\n'
                        'print(depth.as_json())\nmodel.draw(depth, "depth.png")\n',
    "object-tracking": 'for tracked in model.track("video.mp4", (40, 30, 90, 120)):  # the first frame\'s x0 y0 x1 y1\n'
                       '    print(tracked.box, tracked.score)\n',
    "text-encoding": 'print(model.features(["The cat sat on the mat."])[0]["sequence"].shape)\n',
    "language-modeling": 'print(model.generate("The hub runs", 20))  # GPT-2\n',
    "machine-translation": 'print(model.translate(["Gut@@ en Morgen"], beam_size=4))  # BPE subwords in\n',
    # by the runner's name, where one task has several runners
    "LanguageModelScorer": 'print(model.score("the cat sat on the mat")["perplexity"])\n',
}


def _bench(entry: dict[str, Any], bench_file: str) -> str:
    rows = entry["bench"]
    if not rows:
        return (f"<p>No results in <code>{_e(bench_file)}</code>: "
                f"<code>gluon-hub bench {_e(entry['use'])}</code> measures it on this machine.</p>")

    def machine(row: dict[str, Any]) -> str:
        parts = [f"{k}: {v}" for k, v in sorted((row["machine"] or {}).items())]
        parts += [f"{k} {v}" for k, v in sorted((row["versions"] or {}).items())]
        return _e("; ".join(parts))

    def number(value: Any, fmt: str) -> str:
        return _e(format(value, fmt) if isinstance(value, (int, float)) else value)

    return _table(("runtime", "batch", "latency (ms)", "throughput (/s)", "peak memory (MB)", "machine", "measured"),
                  [(_e(r["runtime"]), _e(r["batch"]), number(r["latency_ms"], ".2f"), number(r["throughput"], ".1f"),
                    number(r["peak_mb"], ".0f"), machine(r), _e(r["measured_at"])) for r in rows], "bench")


def model_page(entry: dict[str, Any], bench_file: str) -> str:
    body = (_header(entry) + "<h2>Input and labels</h2>" + _inputs(entry) + "<h2>Weights</h2>" + _weights(entry)
            + "<h2>Portability</h2>" + _portability(entry) + _usage(entry)
            + "<h2>Bench results</h2>" + _bench(entry, bench_file) + _json_script("entry-data", entry))
    return _page(entry["name"], 2, body)


#: For embeddings and vocabularies: the heading, the unit of the size field, the loader, the variable.
_FILES_KINDS = {"embeddings": ("Vectors", "dimensions", "load_embedding", "vectors"),
                "vocabularies": ("Tokens", "tokens", "load_vocabulary", "vocab")}


def files_page(entry: dict[str, Any]) -> str:
    """The page of a dataset, a word embedding or a vocabulary: the files it is read from, and its usage."""
    files = "".join(f'<table class="facts">{_file_rows(f)}</table>' for f in entry["files"]) \
        or "<p>No files declared: the dataset reads files you have (its <code>root</code>).</p>"
    if entry["kind"] in _FILES_KINDS:
        heading, unit, loader, variable = _FILES_KINDS[entry["kind"]]
        about = (f"<h2>{heading}</h2><p>Family {_e(entry['family'] or '-')}, "
                 f"{_e(entry['size'] or 'unknown')} {unit}</p>")
        code = f'import gluon_hub\n\n{variable} = gluon_hub.{loader}("{entry["use"]}")\n'
    else:
        about = f"<h2>Segments</h2><p>{_e(', '.join(entry['segments']) or '-')}</p>"
        code = f'import gluon_hub\n\ndata = gluon_hub.load_dataset("{entry["use"]}"'
        code += f', segment="{entry["segments"][0]}")\n' if entry["segments"] else ")\n"
    body = (_header(entry) + about + f"<h2>Files</h2>{files}"
            f"<h2>Use it</h2><pre><code>{_e(code)}</code></pre>" + _json_script("entry-data", entry))
    return _page(entry["name"], 2, body)


def index_page(data: dict[str, Any]) -> str:
    plugins = _table(("plugin", "version", "distribution", "status"), [
        (_e(p["name"]), _e(p["version"] or "-"), _e(p["distribution"] or "-"), _e(p["status"]))
        for p in data["plugins"]])
    skipped = f" ({plural(data['bench_skipped'], 'unreadable line')} skipped)" if data["bench_skipped"] else ""
    kinds = "".join(f'<option value="{k}">{k}</option>' for k in data["kinds"])
    body = f"""<h1>{_e(_title(data["kinds"]))}</h1>
<form id="filters" onsubmit="return false">
<input id="search" type="search" placeholder="Search names, tasks, descriptions, tags" autofocus>
<select id="kind">{kinds}</select>
<select id="task"><option value="">any task</option></select>
<select id="plugin"><option value="">any plugin</option></select>
<select id="installed"><option value="">installed or not</option><option value="yes">installed</option>
<option value="no">not installed</option></select>
<select id="pretrained"><option value="">pretrained or not</option><option value="yes">pretrained</option>
<option value="no">no weights</option></select>
<select id="portable"><option value="">portable or not</option><option value="yes">portable (ONNX)</option>
<option value="no">not portable</option></select>
</form>
<p id="count"></p>
<table id="results"><thead></thead><tbody></tbody></table>
<noscript><p>Search and the list need JavaScript; each entry's page is under
{_e(", ".join(k + "/" for k in data["kinds"]))}.</p></noscript>
<h2>Plugins</h2>{plugins}
<footer>gluon-hub {_e(data["hub_version"])} on Python {_e(data["python"])}, written {_e(data["generated"])}.
Bench results from <code>{_e(data["bench_file"])}</code>{_e(skipped)}.</footer>
{_json_script("catalogue-data", summary([e for kind in data["kinds"] for e in data[kind]]))}"""
    return _page(_title(data["kinds"]), 0, body)


def _title(kinds: Sequence[str]) -> str:
    """'Models, datasets, embeddings and vocabularies'."""
    return (", ".join(kinds[:-1]) + " and " + kinds[-1]).capitalize()


def write(directory: str | Path, *, bench_path: str | Path | None = None) -> Path:
    """Write the catalogue into ``directory`` (created if needed) and return its index page.

    Pages already there are replaced; the folder may be served as it is or opened from disk.
    """
    out = Path(directory).expanduser()
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"cannot write the catalogue into {out}: it is a file; give a folder")
    data = gather(Path(bench_path) if bench_path is not None else None)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ASSETS, out / "assets", dirs_exist_ok=True)
    for kind in data["kinds"]:
        render = (lambda e: model_page(e, data["bench_file"])) if kind == "models" else files_page
        for entry in data[kind]:
            page = out / entry["page"]
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(render(entry), encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_page(data), encoding="utf-8")
    return index

"""Every HTML card rldk writes, opened in headless Chromium as a person would open it (issue 13, acceptance 6), and the
JSON written beside it validated against its schema in docs/schemas/.

The cards come from the bundled examples and the labeled rollout fixtures: the reward card (`rldk reward health`:
length bias with preference pairs, and proxy up / gold down with a KL log), the reward-model drift card (`rldk reward
drift`), the doctor, drift (`rldk diff`) and determinism cards; `rldk scan --out` writes JSON only. Each folder a
command writes is taken as it is: every *.html in it is rendered and every *.json in it validated (the contamination
card too), so a card a
command starts writing is covered without editing this file.

Chromium screenshots each card and dumps its DOM in the same run, two cards at a time. A card passes when
- the screenshot decodes and is not blank (dark pixels of text and lines, the title at the top);
- it fetches nothing: no http(s) reference, script, stylesheet link or frame in the HTML, no request started by the
  page in Chromium's net log (name resolution is mapped to nowhere, so nothing leaves the machine either way), and no
  console message (the cards have no scripts, so any message is an error);
- the text a reader needs is in the DOM (verdict, names and numbers from the JSON beside it) and every chart is drawn
  with data (no "no data" box).
scripts/setup.sh installs Debian's chromium. Without a browser the rendering tests skip locally and fail when CI=true.
RLDK_CARD_SHOTS=DIR copies the screenshots there to be looked at."""
import concurrent.futures
import html
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import jsonschema
import numpy as np
import pytest
from PIL import Image
from referencing import Registry, Resource

from rollout_fixtures import write_pairs, write_rollouts
from test_cli import rldk_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
WINDOW = (1280, 2400)
RENDER_TIMEOUT = 60  # seconds per Chromium run
PARALLEL_RENDERS = 2  # the machine has 2 cores and others build on it
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


# ---- making the cards -------------------------------------------------------------------------------------------


@dataclass
class Card:
    """One command's report folder and what a reader must find in its page."""
    name: str
    folder: pathlib.Path
    html_expected: bool = True  # the command is documented to write an HTML card
    must_show: list = field(default_factory=list)  # filled from the JSON once it is read
    min_charts: int = 0


def run(args, ok=(0, 1)):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120)
    assert proc.returncode in ok, f"{args[:3]} exited {proc.returncode}: {proc.stderr[-2000:]}"
    return proc


def only_json(folder):
    [path] = folder.glob("*.json")
    return json.loads(path.read_text())


def audit_checks(doc):
    """The environment audit's section and its check ids, when the report carries an audit."""
    audit = doc.get("env_audit")
    return ["Environment audit"] + [c["id"] for c in audit["checks"]] if audit else []


def reward_health_card(tmp, kind):
    """length_bias: the rollouts and a miscalibrated preference-pair file in one folder (calibration and its
    reliability diagram); proxy_up_gold_down: with the trainer's KL log (gold fitted against sqrt(KL))."""
    data = write_rollouts(str(tmp / f"rollouts_{kind}"), kind, fmt="trl_parquet", seed=0)
    extra = []
    if kind == "length_bias":
        write_pairs(data.path, "miscalibrated_pairs", fmt="trl_parquet")
    if kind == "proxy_up_gold_down":
        log = tmp / "trainer_log.jsonl"
        log.write_text("".join(json.dumps({"step": s, "kl": 0.1 * s}) + "\n" for s in range(1, 31)))
        extra = ["--kl-log", log]
    out = tmp / f"reward_health_{kind}"
    run([rldk_binary(), "reward", "health", data.path, *extra, "--out", out])
    doc = only_json(out)
    card = Card(f"reward_health_{kind}", out)
    card.must_show = ["Reward card", doc["verdict"].upper()]
    for column in doc["columns"]:
        card.must_show.append(column["name"])
        card.must_show += list(column["checks"])  # one row per check, measured or not
        for sample in column["checks"]["suspicious_samples"].get("samples") or []:
            card.must_show.append(" ".join(sample["text"].split()[:8]))  # the quoted evidence itself
        gold = column["checks"]["gold"]
        card.min_charts += (gold["status"] != "not_measurable") + (gold.get("fit_beta") is not None)
    card.must_show += [f["check"] for f in doc["findings"]]
    calibration = doc.get("calibration") or {}
    if calibration.get("status") not in (None, "not_measurable"):
        card.must_show.append("calibration")
        card.min_charts += 1  # the reliability diagram
    return card


def reward_drift_card(tmp):
    data = write_rollouts(str(tmp / "rollouts_swap"), "rm_swap", fmt="trl_parquet", seed=0)
    out = tmp / "reward_drift"
    run([rldk_binary(), "reward", "drift", data.path, data.path, "--a-col", data.reward_columns[0], "--b-col",
         data.reward_columns[1], "--out", out])
    doc = only_json(out)
    card = Card("reward_drift", out)
    card.must_show = [doc["verdict"], doc["a"]["column"], doc["b"]["column"]]
    return card


def doctor_card(tmp):
    out = tmp / "doctor"
    run([rldk_binary(), "doctor", ROOT / "examples" / "scan" / "ppo_kl_shift.jsonl", "--out", out, "--python",
         sys.executable])
    doc = only_json(out)
    findings = doc["scan"]["findings"]
    card = Card("doctor", out)
    card.must_show = [doc["verdict"].upper(), doc["scan"]["run_id"]] + audit_checks(doc)
    card.must_show += [f["detector"] for f in findings] + [f["metric"] for f in findings]
    card.min_charts = len({f["metric"] for f in findings})  # one chart per implicated metric
    return card


def diff_card(tmp):
    out = tmp / "diff"
    examples = ROOT / "examples" / "diff"
    run([rldk_binary(), "diff", examples / "baseline.jsonl", examples / "lr_change.jsonl", "--out", out])
    doc = only_json(out)
    card = Card("diff", out)
    card.must_show = ["Drift card", "baseline.jsonl", "lr_change.jsonl"] + [s["name"] for s in doc["signals"]]
    card.must_show.append("DIVERGED" if any(s["divergence"]["diverged"] for s in doc["signals"]) else "NO DIVERGENCE")
    card.min_charts = len(doc["signals"])  # one chart per compared signal
    return card


def determinism_card(tmp):
    out = tmp / "determinism"
    demo = f"{sys.executable} {ROOT / 'examples' / 'trainers' / 'det_demo.py'} --mode nondet --steps 30"
    run([rldk_binary(), "check-determinism", "--cmd", demo, "--compare", "loss", "--work-dir",
         tmp / "determinism_work", "--out", out])
    doc = only_json(out)
    card = Card("determinism", out)
    card.must_show = ["Determinism card", doc["verdict"].upper(), doc["summary"]] + audit_checks(doc)
    for m in doc["metrics"]:
        card.must_show.append(m["name"])
        if m["first_divergent_step"] is not None:
            card.must_show.append(f"first divergence {m['first_divergent_step']}")  # the marker on its chart
    card.min_charts = 2 * len(doc["metrics"])  # per replica, and the spread across replicas
    return card


def contamination_card(tmp):
    """Eval items of which the training pool holds a verbatim copy and a half copy, one clean; a quote with markup."""
    items = ["How many <b>apples</b> does Ann have if she buys 12 bags of 7 apples and gives away 19 of them to friends",
             "A train leaves the station at 3 pm travelling 60 km per hour; when does it reach the city 150 km away",
             "What is the smallest prime number that is larger than one hundred and also one more than a square"]
    train, evals = tmp / "contamination_train.jsonl", tmp / "contamination_eval.jsonl"
    train.write_text(json.dumps({"prompt": "Solve: " + items[0]}) + "\n" +
                     json.dumps({"prompt": " ".join(items[1].split()[:12]) + " and stops twice"}) + "\n")
    evals.write_text("".join(json.dumps({"id": i, "question": q}) + "\n" for i, q in enumerate(items)))
    out = tmp / "contamination"
    run([rldk_binary(), "contamination", "--train", train, "--eval", evals, "--out", out])
    doc = only_json(out)
    card = Card("contamination", out)
    card.must_show = ["rldk contamination card", "CONTAMINATED", str(evals)]
    for item in doc["items"]:
        if item["verdict"] != "clean":
            card.must_show.append(f"{item['file']}:{item['row']} - {item['verdict']}")
            card.must_show += [s["quote"][:40] for t in item["texts"] for s in t["ngram"]["spans"]]
    return card


def scan_report(tmp):
    out = tmp / "scan"
    run([rldk_binary(), "scan", ROOT / "examples" / "scan" / "ppo_kl_shift.jsonl", "--out", out])
    return Card("scan", out, html_expected=False)


@pytest.fixture(scope="module")
def cards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cards")
    # The slow two first (doctor and check-determinism probe the Python environment), side by side.
    makers = [(doctor_card,), (determinism_card,), (reward_health_card, "length_bias"),
              (reward_health_card, "proxy_up_gold_down"), (reward_drift_card,), (diff_card,), (scan_report,),
              (contamination_card,)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL_RENDERS) as pool:
        made = [f.result() for f in [pool.submit(maker, tmp, *args) for maker, *args in makers]]
    return {card.name: card for card in made}


# ---- JSON: every document beside a card validates against its schema ---------------------------------------------


def schema_file(schema_id):
    """rldk.reward-health/v1 -> docs/schemas/rldk.reward-health.v1.schema.json"""
    name, _, version = schema_id.rpartition("/")
    return SCHEMAS / f"{name}.{version}.schema.json"


def retrieve(uri):
    # The schemas refer to each other by file name, relative to their own $id (e.g. rldk.doctor/v1 refers to
    # rldk.scan.v1.schema.json, which resolves to rldk.doctor/rldk.scan.v1.schema.json): the file name decides.
    path = SCHEMAS / uri.rsplit("/", 1)[-1]
    if not path.is_file():
        raise LookupError(f"no schema {uri} in docs/schemas/")
    return Resource.from_contents(json.loads(path.read_text()))


def embedded_documents(value, where="$"):
    """The document and every rldk document inside it (doctor.json carries an rldk.env-audit/v1 document)."""
    if isinstance(value, dict):
        if isinstance(value.get("schema"), str) and re.fullmatch(r"rldk\.[a-z-]+/v\d+", value["schema"]):
            yield where, value
        for key, item in value.items():
            yield from embedded_documents(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from embedded_documents(item, f"{where}[{i}]")


def test_every_report_json_validates_against_its_schema(cards):
    registry = Registry(retrieve=retrieve)
    validated = set()
    for card in cards.values():
        documents = sorted(card.folder.glob("*.json"))
        assert documents, f"{card.name}: no JSON report in {card.folder}"
        for path in documents:
            for where, doc in embedded_documents(json.loads(path.read_text())):
                schema = schema_file(doc["schema"])
                assert schema.is_file(), f"{path.name} {where}: no schema file for {doc['schema']}"
                validator = jsonschema.Draft202012Validator(json.loads(schema.read_text()), registry=registry)
                errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
                assert not errors, f"{card.name}/{path.name} {where} against {schema.name}:\n" + "\n".join(
                    f"  {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in errors[:10])
                validated.add(doc["schema"])
    assert {"rldk.reward-health/v1", "rldk.reward-drift/v1", "rldk.doctor/v1", "rldk.env-audit/v1", "rldk.diff/v1",
            "rldk.determinism/v1", "rldk.scan/v1"} <= validated


# ---- rendering in Chromium ---------------------------------------------------------------------------------------


def browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("CI=true but no headless Chromium on PATH: scripts/setup.sh installs Debian's chromium")
    pytest.skip("no headless Chromium on PATH (" + ", ".join(BROWSERS) + "): scripts/setup.sh installs chromium")


@dataclass
class Rendering:
    page: pathlib.Path
    png: pathlib.Path
    dom: str
    log: str
    requests: list  # URLs the page asked the network for

    def errors(self):
        """Chromium's log without the noise of a machine with no D-Bus, GPU or screensaver service."""
        noise = re.compile(r"dbus|D-Bus|vaapi|drmGetDevices|InitializeSandbox|UPower|bytes written to file")
        return "\n".join(line for line in self.log.splitlines() if not noise.search(line))[-3000:]


def page_requests(netlog_path):
    """URL requests started on behalf of the page. The browser's own background requests (update checks, account
    lookups) carry no initiating origin; the page's carry it and a file:// top-level site."""
    log = json.loads(netlog_path.read_text())
    event_types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event_types.get(event["type"]) != "URL_REQUEST_START_JOB" or "url" not in params:
            continue
        if params.get("initiator") != "not an origin" or "file://" in params.get("network_isolation_key", ""):
            urls.append(params["url"])
    return urls


def render(chromium, page, work):
    work.mkdir(parents=True, exist_ok=True)
    png, netlog = work / "shot.png", work / "netlog.json"
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--user-data-dir=" + str(work / "profile"),  # one profile per run: two browsers run at once
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
         "--log-net-log=" + str(netlog), "--net-log-capture-mode=Default",
         "--window-size=%d,%d" % WINDOW, "--screenshot=" + str(png), "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=RENDER_TIMEOUT)
    assert proc.returncode == 0, f"chromium exited {proc.returncode} on {page}:\n{proc.stderr[-3000:]}"
    requests = page_requests(netlog) if netlog.exists() else ["(no net log written)"]
    return Rendering(page, png, proc.stdout, proc.stderr, requests)


@pytest.fixture(scope="module")
def rendered(cards, tmp_path_factory):
    chromium = browser()
    work = tmp_path_factory.mktemp("chromium")
    pages = [(card.name, page) for card in cards.values() for page in sorted(card.folder.glob("*.html"))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL_RENDERS) as pool:
        futures = {(name, page.name): pool.submit(render, chromium, page, work / f"{name}_{page.stem}")
                   for name, page in pages}
        results = {key: future.result() for key, future in futures.items()}
    keep = os.environ.get("RLDK_CARD_SHOTS")
    if keep:
        pathlib.Path(keep).mkdir(parents=True, exist_ok=True)
        for (name, page), r in results.items():
            shutil.copyfile(r.png, pathlib.Path(keep) / f"{name}_{pathlib.Path(page).stem}.png")
    return results


CARD_NAMES = ["reward_health_length_bias", "reward_health_proxy_up_gold_down", "reward_drift", "doctor", "diff",
              "determinism", "contamination"]


def test_every_page_written_is_checked(cards, rendered):
    assert {name for name, _ in rendered} <= set(CARD_NAMES), "a new card: give it a Card with what it must show"


def renderings_of(name, cards, rendered):
    card = cards[name]
    found = [r for (n, _), r in rendered.items() if n == name]
    if not found and card.html_expected:
        if name == "reward_drift":  # issue 13: "Drift card like the reward card"; not written yet
            pytest.xfail("rldk reward drift --out writes no HTML card yet")
        pytest.fail(f"{name}: no HTML card in {card.folder} ({sorted(p.name for p in card.folder.iterdir())})")
    return card, found


class DomText(html.parser.HTMLParser):
    """The text a reader sees (not styles or the title), and each chart's text and drawn paths."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.charts, self.skip, self.svg_depth = [], [], 0, 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script", "title"):
            self.skip += 1
        if tag == "svg":
            if self.svg_depth == 0:
                self.charts.append({"text": [], "paths": 0})
            self.svg_depth += 1
        elif tag == "path" and self.svg_depth and dict(attrs).get("fill") == "none":
            self.charts[-1]["paths"] += 1  # a series line (markers and regions are filled shapes)

    def handle_endtag(self, tag):
        if tag in ("style", "script", "title"):
            self.skip -= 1
        if tag == "svg":
            self.svg_depth -= 1

    def handle_data(self, data):
        if self.skip:
            return
        self.text.append(data)
        if self.svg_depth:
            self.charts[-1]["text"].append(data)


FETCHING_TAGS = {"script", "link", "iframe", "frame", "object", "embed", "base", "img", "image", "video", "audio",
                 "source", "track", "feimage"}
REFERENCE_ATTRS = {"src", "href", "xlink:href", "srcset", "poster", "action", "formaction", "background", "data",
                   "ping", "manifest"}
CSS_FETCH = re.compile(r"url\(\s*[\"']?\s*(?!#|data:)|@import", re.I)


class ExternalReferences(html.parser.HTMLParser):
    """What in a page's source could make the browser fetch something: parsed, so a quoted completion that says
    "src=" stays text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self.in_style = [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in FETCHING_TAGS:
            self.found.append(f"<{tag} {attrs}>")
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh":
            self.found.append(f"<meta {attrs}>")
        for name, value in attrs.items():
            value = (value or "").strip()
            if name in REFERENCE_ATTRS and not value.startswith(("#", "data:")):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name == "style" and CSS_FETCH.search(value):
                self.found.append(f"<{tag} style={value!r}>")
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        if self.in_style and CSS_FETCH.search(data):
            self.found.append("<style> " + data[max(0, CSS_FETCH.search(data).start() - 60):][:160])


@pytest.mark.parametrize("name", CARD_NAMES)
def test_card_fetches_nothing(name, cards, rendered):
    card, found = renderings_of(name, cards, rendered)
    for r in found:
        source = ExternalReferences()
        source.feed(r.page.read_text())
        assert not source.found, f"{r.page.name} refers to outside resources: {source.found[:5]}"
        assert not r.requests, f"{r.page.name} made network requests: {r.requests}"
        console = [line for line in r.log.splitlines() if re.search(r":CONSOLE[:(]", line)]
        assert not console, f"{r.page.name} wrote to the console:\n" + "\n".join(console)


@pytest.mark.parametrize("name", CARD_NAMES)
def test_card_screenshot_is_not_blank(name, cards, rendered):
    card, found = renderings_of(name, cards, rendered)
    for r in found:
        assert r.png.is_file() and r.png.stat().st_size > 0, f"no screenshot of {r.page.name}:\n{r.errors()}"
        with Image.open(r.png) as image:
            assert image.size == WINDOW
            grey = np.asarray(image.convert("L"), dtype=np.uint8)
        dark = grey < 160  # text, lines, coloured marks; the page and panel backgrounds are near white
        assert dark.mean() > 0.004, f"{r.page.name}: screenshot nearly blank ({dark.mean():.4%} dark pixels)"
        assert dark[:90].any(), f"{r.page.name}: no title in the top 90 pixels"
        assert len(np.unique(grey)) > 32, f"{r.page.name}: {len(np.unique(grey))} grey levels, not a rendered page"


@pytest.mark.parametrize("name", CARD_NAMES)
def test_card_shows_what_a_reader_needs(name, cards, rendered):
    card, found = renderings_of(name, cards, rendered)
    for r in found:
        assert "</html>" in r.dom.lower(), f"{r.page.name}: no DOM dumped:\n{r.errors()}"
        dom = DomText()
        dom.feed(r.dom)
        shown = " ".join(" ".join(dom.text).split())
        missing = [t for t in card.must_show if " ".join(html.unescape(t).split()).lower() not in shown.lower()]
        assert not missing, f"{r.page.name}: not shown: {missing}"
        # Markdown is for the .md file: in a page it shows as pipes and dashes (a table rule) or a "## " heading.
        assert not re.search(r"\|\s*-{3,}\s*\||(^|\n)#{1,3} ", " ".join(dom.text)), f"{r.page.name}: raw Markdown"
        assert len(dom.charts) >= card.min_charts, f"{r.page.name}: {len(dom.charts)} charts, {card.min_charts} due"
        for i, chart in enumerate(dom.charts):
            words = " ".join(chart["text"])
            assert "no data" not in words, f"{r.page.name}: chart {i + 1} ({words[:60]}) is empty"
            assert chart["paths"] > 0, f"{r.page.name}: chart {i + 1} ({words[:60]}) draws no line"

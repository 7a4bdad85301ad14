"""The reference suite's output, as a person opens it: OUT/index.html and every card it links, rendered in headless
Chromium (not blank, a title, nothing fetched from the network, no console message), every JSON report beside them
valid against its schema, and the table complete (every run of the catalog, every expectation met).

The suite runs as its own stage of scripts/test.sh (`rldk reference run --quick --out build/reference`), before the
Python tests; RLDK_REFERENCE_OUT names its folder. Without it (a plain local pytest) these tests skip."""
import concurrent.futures
import json
import os
import pathlib
import re

import numpy as np
import pytest
from PIL import Image

from rldk.reference import catalog
from test_cards_render import WINDOW, browser, render

OUT = os.environ.get("RLDK_REFERENCE_OUT")
pytestmark = pytest.mark.skipif(not OUT, reason="RLDK_REFERENCE_OUT not set: the reference suite did not run first")


@pytest.fixture(scope="module")
def results():
    return json.loads((pathlib.Path(OUT) / "results.json").read_text())


def linked_pages(out):
    html = (out / "index.html").read_text()
    return [out / href for href in re.findall(r'href="([^"]+\.html)"', html)]


def test_the_table_covers_the_catalog_and_every_expectation_is_met(results):
    assert results["schema"] == "rldk.reference/v1" and results["mode"] == "quick"
    runs = {row["run"] for row in results["rows"]}
    assert runs == {r.name for r in catalog.runs(full=False)}
    missed = [row for row in results["rows"] if not row["ok"]]
    assert not missed, missed
    assert results["met"] == results["expectations"] == len(results["rows"])


def test_every_json_report_validates_against_its_schema():
    import jsonschema
    from referencing import Registry

    from test_cards_render import embedded_documents, retrieve, schema_file

    registry = Registry(retrieve=retrieve)
    validated = set()
    for path in sorted(pathlib.Path(OUT, "cards").glob("*/*.json")):
        for where, doc in embedded_documents(json.loads(path.read_text())):
            schema = schema_file(doc["schema"])
            assert schema.is_file(), f"{path} {where}: no schema file for {doc['schema']}"
            validator = jsonschema.Draft202012Validator(json.loads(schema.read_text()), registry=registry)
            errors = [e.message[:300] for e in validator.iter_errors(doc)][:10]
            assert not errors, f"{path} {where} against {schema.name}: {errors}"
            validated.add(doc["schema"])
    assert {"rldk.doctor/v1", "rldk.diff/v1", "rldk.determinism/v1", "rldk.reward-health/v1",
            "rldk.contamination/v1"} <= validated


def test_index_and_every_linked_card_render(tmp_path):
    chromium = browser()
    out = pathlib.Path(OUT).resolve()
    pages = [out / "index.html"] + linked_pages(out)
    assert len(pages) > 10
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        shots = list(pool.map(lambda ip: render(chromium, ip[1], tmp_path / str(ip[0])), enumerate(pages)))
    for r in shots:
        assert not r.requests, f"{r.page} fetched {r.requests}"
        with Image.open(r.png) as image:
            grey = np.asarray(image.convert("L"), dtype=np.uint8)
        assert image.size == WINDOW
        assert (grey < 160).mean() > 0.004, f"{r.page}: screenshot nearly blank"
        assert (grey[:90] < 160).any(), f"{r.page}: no title in the top 90 pixels"
    index_dom = shots[0].dom
    assert "rldk reference suite" in index_dom and "expectations met" in index_dom

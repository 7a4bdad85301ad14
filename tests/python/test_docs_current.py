"""Generated parts of the docs match their source."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_detector_catalog_table_is_current():
    catalog = _load(os.path.join(ROOT, "scripts", "detector_catalog.py"))
    text, start, end = catalog.documented()
    assert text[start:end] == catalog.table(), (
        "docs/detectors.md is out of date with data/detectors/*.yaml: run python3 scripts/detector_catalog.py --update")

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


def test_readme_counts_the_detectors_the_catalog_holds():
    import re
    import yaml
    ids = []
    for name in sorted(os.listdir(os.path.join(ROOT, "data", "detectors"))):
        if name.endswith(".yaml"):
            with open(os.path.join(ROOT, "data", "detectors", name)) as f:
                ids += [d["id"] for d in yaml.safe_load(f)["detectors"]]
    with open(os.path.join(ROOT, "README.md")) as f:
        counts = re.findall(r"findings from (\d+) detectors", f.read())
    assert counts == [str(len(ids))], "README.md names %s detectors; the catalog holds %d" % (counts, len(ids))

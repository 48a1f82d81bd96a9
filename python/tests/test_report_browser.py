"""Every report kind opened in headless Chromium (Debian's chromium): it renders its charts, and the
page's script raises no error. The screenshots go to $TILEBANK_SCREENSHOTS when set (docs/)."""
import os
import shutil
import subprocess

import pytest

import tilebank
from models import conv_relu
from test_tune_and_bank import DATA, op_list


def open_in_chromium(html, png):
    chromium = shutil.which("chromium")
    assert chromium, "chromium is not installed (scripts/setup.sh --browser)"
    common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
              "--window-size=1280,2400"]
    shot = subprocess.run(common + ["--screenshot=" + png, "file://" + os.path.abspath(html)], capture_output=True, text=True, timeout=120)
    assert os.path.getsize(png) > 10000, shot.stderr
    dom = subprocess.run(common + ["--dump-dom", "file://" + os.path.abspath(html)], capture_output=True, text=True, timeout=120)
    errors = [line for line in (shot.stderr + dom.stderr).splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not errors, errors
    assert "<svg" in dom.stdout
    return dom.stdout


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reports")
    root = str(tmp / "bank")
    opat = tilebank.tune(op_list(tmp), bank=root, trials=6, progress=False, output_dir=str(tmp))
    sgat = tilebank.tune(conv_relu(tmp / "conv.onnx"), job_type=1, bank=root, trials=4, progress=False, output_dir=str(tmp))
    gdat = tilebank.tune(os.path.join(DATA, "gradient_profile_resnet18.json"), job_type=4, bank=root, output_dir=str(tmp))
    return {
        "opat": opat.report(str(tmp / "opat.html")),
        "sgat": sgat.report(str(tmp / "sgat.html")),
        "gdat": gdat.report(str(tmp / "gdat.html")),
        "jobs": tilebank.report([opat.result_path, sgat.result_path], str(tmp / "jobs.html")),
        "bank": tilebank.bank_report(root, str(tmp / "bank.html"), model=str(tmp / "conv.onnx")),
    }


@pytest.mark.parametrize("kind", ["opat", "sgat", "gdat", "jobs", "bank"])
def test_report_opens_in_chromium(reports, kind, tmp_path):
    out = os.environ.get("TILEBANK_SCREENSHOTS") or str(tmp_path)
    os.makedirs(out, exist_ok=True)
    dom = open_in_chromium(reports[kind], os.path.join(out, "report_%s.png" % kind))
    if kind in ("opat", "sgat"):
        assert "Best so far" in dom and "<table class=\"sortable\">" in dom
    if kind == "opat":
        assert "Every trial against each knob" in dom
    if kind == "jobs":
        assert "Jobs over time" in dom
    if kind == "bank":
        assert "Coverage of" in dom and "Provenance" in dom

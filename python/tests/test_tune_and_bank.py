"""tilebank.tune of every job type with callbacks, stopping and reload; tilebank.Bank with the CLI's rules."""
import json
import os

import pytest

import tilebank
from models import conv_relu, matmul_relu

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "data")


def op_list(tmp_path, ops=("bias_add", "bert_layernorm")):
    with open(os.path.join(DATA, "ops_sample.json")) as f:
        chosen = [op for op in json.load(f) if op["name"] in ops]
    path = tmp_path / "ops.json"
    path.write_text(json.dumps(chosen))
    return str(path)


def test_opat_callbacks_stop_and_reload(tmp_path):
    events = []

    def stop_after_first_task(event):
        events.append(event)
        return event["event"] == "task_done"

    bank = str(tmp_path / "bank")
    first = tilebank.tune(op_list(tmp_path), job_type=2, bank=bank, trials=3, callbacks=[stop_after_first_task], progress=False,
                          output_dir=str(tmp_path / "out"))
    assert first.stopped
    kinds = [e["event"] for e in events]
    assert kinds[0] == "job_started" and "trial" in kinds and kinds[-1] == "job_done"
    trial = next(e for e in events if e["event"] == "trial")
    assert {"policy", "time_us", "spread_us", "verdict", "template"} <= set(trial)
    assert len(first.tasks) == 1 and first.trials
    rest = tilebank.tune(job_type=2, bank=bank, trials=3, reload="", progress=False, output_dir=str(tmp_path / "out"))
    assert not rest.stopped
    assert rest.result_path == first.result_path  # the same job went on
    assert [t["name"] for t in rest.tasks] == ["bert_layernorm", "bias_add"]  # the first from the first run, kept
    assert rest.result[0]["basic"]["tuning_time(s)"] >= 0


def test_a_callback_that_raises_stops_the_job_and_the_error_surfaces(tmp_path):
    def boom(event):
        if event["event"] == "task_done":
            raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        tilebank.tune(op_list(tmp_path), bank=str(tmp_path / "bank"), trials=2, callbacks=boom, progress=False, output_dir=str(tmp_path))


def test_sgat_and_gdat_jobs_and_their_reports(tmp_path):
    sgat = tilebank.tune(conv_relu(tmp_path / "conv.onnx"), job_type=1, bank=str(tmp_path / "bank"), trials=4, progress=False,
                         output_dir=str(tmp_path))
    assert sgat.job_type == 1 and sgat.tasks
    html = open(sgat.report(str(tmp_path / "sgat.html"))).read()
    assert "<svg" in html and "SGAT job" in html
    gdat = tilebank.tune(os.path.join(DATA, "gradient_profile_resnet18.json"), job_type=4, bank=str(tmp_path / "bank"), soc="some-other-soc",
                         output_dir=str(tmp_path))
    assert "GDAT" in gdat.result[1]
    html = open(gdat.report(str(tmp_path / "gdat.html"))).read()
    assert "backward timeline" in html


def test_tune_errors(tmp_path):
    with pytest.raises(tilebank.InvalidInputError, match="job_type must be 2 \\(OPAT\\), 1 \\(SGAT\\) or 4 \\(GDAT\\)"):
        tilebank.tune(op_list(tmp_path), job_type=3)
    with pytest.raises(tilebank.RefusedError, match="tuning measures this machine"):
        tilebank.tune(op_list(tmp_path), soc="other-soc", bank=str(tmp_path / "b"))
    with pytest.raises(tilebank.NotFoundError):
        tilebank.tune(job_type=2, bank=str(tmp_path / "none"), reload="")
    with pytest.raises(tilebank.InvalidInputError, match="force_fp32 .* or allow_fp32_to_bf16"):
        tilebank.tune(op_list(tmp_path), bank=str(tmp_path / "b"), precision_mode="fp16")
    with pytest.raises(tilebank.InvalidInputError, match="precision_mode is for job type 2"):
        tilebank.tune(op_list(tmp_path), job_type=1, bank=str(tmp_path / "b"), precision_mode="allow_fp32_to_bf16")
    assert not (tmp_path / "b").exists()


def test_bank_rules(tmp_path):
    root = str(tmp_path / "bank")
    tilebank.tune(op_list(tmp_path, ("bias_add",)), bank=root, trials=3, progress=False, output_dir=str(tmp_path))
    bank = tilebank.Bank(root)
    assert bank.soc_version == tilebank.soc_version()
    entries = list(bank)
    assert len(bank) == len(entries)
    assert bank.validate() == []
    with open(os.path.join(DATA, "ops_sample.json")) as f:
        op = next(o for o in json.load(f) if o["name"] == "bias_add")
    answer = bank.query(op)
    assert answer["state"] in ("hit", "miss")
    assert bank.stats()["soc_version"] == bank.soc_version
    other = tilebank.Bank(str(tmp_path / "other"), readonly=False)
    counts = other.merge(bank)
    assert sum(c["added"] for c in counts.values()) == len(entries)
    assert bank.diff(other)["changed"] == [] and bank.diff(other)["only_in_a"] == []
    bank.export(str(tmp_path / "bank.jsonl"))
    assert open(tmp_path / "bank.jsonl").readline().startswith("{")
    with pytest.raises(tilebank.RefusedError, match="readonly"):
        bank.merge(other)
    foreign = tilebank.Bank(str(tmp_path / "foreign"), soc="x86_64-other-soc", readonly=False)
    with pytest.raises(tilebank.RefusedError, match="only banks of the same soc_version merge"):
        other.merge(foreign)
    with pytest.raises(tilebank.NotFoundError):
        tilebank.Bank(str(tmp_path / "absent"))
    with pytest.raises(tilebank.InvalidInputError):
        bank.query({"op": "Conv"})
    html = open(tilebank.bank_report(root, str(tmp_path / "bank.html"), diff=str(tmp_path / "other"))).read()
    assert "Entries per op type" in html and "Diff against" in html

#!/usr/bin/python3
"""Tests of tilebank.torch (GDAT in a DDP job), 2 gloo ranks on loopback started by tilebank.launch:
a plan leaves the math as it is (parameters after N steps equal plain DDP's), TILEBANK_GDAT=tune
tunes in the loop and keeps a measured plan that the next run applies, bad settings are refused.

    /usr/bin/python3 python/tilebank/torch_test.py BUILD_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.join(PYTHON_DIR, "..", "build")

# A training job: a 7-layer MLP, each rank its own data, SGD. Writes what gradient_fusion returned
# (its state when returned and after the last step, its ends) and the parameters after the last
# step (rank 0).
JOB = r'''
import json, os, sys
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import tilebank.torch as tb
from tilebank import ddp_plan
dist.init_process_group("gloo")
torch.manual_seed(0)
torch.set_num_threads(1)
layers = []
for width in (256, 384, 384, 256, 256, 128):
    layers += [torch.nn.Linear(layers[-2].out_features if layers else 64, width), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(128, 10))
mode = sys.argv[1]
if mode.startswith("reordered"):
    # The head is registered first and runs last: gradients are not ready in the reverse of DDP's
    # parameter order, so the bank is looked up by the order the first iteration shows.
    class Reordered(torch.nn.Module):
        def __init__(self, body):
            super().__init__()
            self.head = body[-1]
            self.body = body[:-1]

        def forward(self, x):
            return self.head(self.body(x))
    model = Reordered(model)
ddp = DDP(model)
plan = None
state_at_start = None
if mode in ("fusion", "reordered-fusion"):
    plan = tb.gradient_fusion(ddp)
    state_at_start = plan.state if plan is not None else None
elif mode == "reordered-profile":
    # A gradient profile in the observed ready order whose AllReduce costs 50 ms a call: fusing
    # everything into one segment is the plan offline tuning keeps.
    from tilebank.step_clock import StepClock
    problem = tb.GradientProblem(ddp)
    clock = StepClock(ddp, problem.params)
elif mode == "explicit":
    n = len(ddp_plan.reducer_parameters(ddp))
    ddp_plan.install_plan(ddp, list(reversed(range(n))), [1, 5, 9, n])
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
g = torch.Generator().manual_seed(100 + dist.get_rank())
for step in range(int(sys.argv[2])):
    x = torch.randn(16, 64, generator=g)
    y = torch.randint(0, 10, (16,), generator=g)
    opt.zero_grad()
    if mode == "reordered-profile":
        sample = clock.next_iteration()
    torch.nn.functional.cross_entropy(ddp(x), y).backward()
    opt.step()
if mode == "reordered-profile":
    sample = clock.next_iteration()
    problem.order = sample.order
    grads = [{"name": problem.names[i], "numel": problem.params[i].numel(), "type": "float32", "ready_ms": 1.0 + k}
             for k, i in enumerate(sample.order)]
    plan = problem.description_with(grads, [{"bytes": 4 << k, "ms": 50.0 + 0.001 * (4 << k) / 1024} for k in range(0, 22, 2)], 1)
    plan["reverse_parameter_order"] = sample.order == list(reversed(range(len(problem.params))))
if dist.get_rank() == 0:
    with open(sys.argv[3], "w") as f:
        fusion = isinstance(plan, tb.FusionPlan)
        json.dump({"plan": plan.ends if fusion else plan, "truth": bool(plan) if fusion else None, "state_at_start": state_at_start,
                   "state": plan.state if fusion else None, "params": [p.detach().flatten().tolist() for p in model.parameters()]}, f)
dist.destroy_process_group()
'''


class GradientFusionTest(unittest.TestCase):
    port = 29720

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tilebank_torch_test_")
        self.job = os.path.join(self.dir, "job.py")
        with open(self.job, "w") as f:
            f.write(JOB)
        self.env = dict(os.environ, PYTHONPATH=PYTHON_DIR, TILEBANK_BIN=os.path.join(BUILD, "tilebank"),
                        TUNE_BANK_PATH=os.path.join(self.dir, "bank"), ASCEND_WORK_PATH=os.path.join(self.dir, "out"),
                        OMP_NUM_THREADS="1")
        self.env.pop("TILEBANK_GDAT", None)
        os.makedirs(self.env["ASCEND_WORK_PATH"])

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def train(self, mode, steps, gdat=None, expect_ok=True):
        GradientFusionTest.port += 1
        out = os.path.join(self.dir, f"{mode}_{GradientFusionTest.port}.json")
        env = dict(self.env)
        if gdat is not None:
            env["TILEBANK_GDAT"] = gdat
        done = subprocess.run([sys.executable, "-m", "tilebank.launch", "--nproc", "2", "--master-port", str(GradientFusionTest.port),
                               self.job, mode, str(steps), out], env=env, capture_output=True, text=True, timeout=600)
        if not expect_ok:
            return done
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        with open(out) as f:
            return json.load(f), done.stderr

    def assertSameParameters(self, a, b):
        self.assertEqual(len(a), len(b))
        for x, y in zip(a, b):
            self.assertEqual(len(x), len(y))
            self.assertLessEqual(max(abs(u - v) for u, v in zip(x, y)), 1e-6)

    def test_a_plan_keeps_the_math(self):
        plain, _ = self.train("plain", 12)
        planned, _ = self.train("explicit", 12)
        self.assertSameParameters(plain["params"], planned["params"])
        # The comparison can fail: a step more moves the parameters beyond its tolerance.
        longer, _ = self.train("plain", 13)
        with self.assertRaises(AssertionError):
            self.assertSameParameters(plain["params"], longer["params"])

    def test_tune_keeps_a_measured_plan_that_the_next_run_applies(self):
        steps = 90  # 2 warm-up + 5 recorded + at most 11 plans x 3 + 5 x 4 + 3 x 5, and some with the plan kept
        plain, _ = self.train("plain", steps)
        tuned, log = self.train("fusion", steps, gdat="tune")
        self.assertIsNone(tuned["plan"])  # the bank was empty: tuning starts from DDP's buckets
        self.assertEqual(tuned["state_at_start"], "tuning")
        self.assertIn("tilebank GDAT:", log)
        self.assertIn("process finished. Performance improved by", log)
        # Every plan switch in the loop left the math as it is.
        self.assertSameParameters(plain["params"], tuned["params"])
        results = glob.glob(os.path.join(self.env["ASCEND_WORK_PATH"], "aoe_result_gdat_*.json"))
        self.assertEqual(len(results), 1)
        with open(results[0]) as f:
            gdat = json.load(f)[1]["GDAT"]
        self.assertEqual(gdat["verified"], "measured")
        self.assertEqual(gdat["world_size"], 2)
        self.assertEqual(gdat["gradient_num"], 14)
        measured = [p for p in gdat["plans"] if "measured_iteration(ms)" in p]
        self.assertGreaterEqual(len(measured), 2)
        # DDP's plan through tilebank's reducer has DDP's ends, and its own row beside DDP's.
        self.assertIn("ddp (tilebank's reducer)", [p["plan"] for p in measured])
        for p in measured:
            # 2 timed iterations in the first round, 3 in the second, 4 in the third for the finalists
            self.assertIn(p["measured_iterations"], (2, 5, 9))
            self.assertEqual(p["finalist"], p["measured_iterations"] == 9)
            self.assertIn("model_error", p)
        # DDP's default and the 2 fastest (the result file lists each plan by name; anchors may share ends)
        self.assertLessEqual(len({p["ends"] for p in measured if p["finalist"]}), 3)
        self.assertIn(gdat["status"], ("add", "unsatisfied"))
        applied, _ = self.train("fusion", 4)
        if gdat["status"] == "add":
            entry = subprocess.run([self.env["TILEBANK_BIN"], "bank", "export", "-o", "-"],
                                   env=self.env, capture_output=True, text=True)
            self.assertIn('"verified":"measured"', entry.stdout.replace(" ", ""))
            self.assertIsNotNone(applied["plan"])
            self.assertEqual(applied["plan"][-1], 14)
            self.assertEqual((applied["state_at_start"], applied["state"], applied["truth"]), ("applied", "applied", True))
        else:
            self.assertIsNone(applied["plan"])
            # Nothing for the guessed order, nor for the observed one (the same): pending, then none.
            self.assertEqual((applied["state_at_start"], applied["state"], applied["truth"]), ("pending", "none", False))

    def test_a_plan_for_another_ready_order_is_found_after_the_first_iteration(self):
        profiled, _ = self.train("reordered-profile", 2)
        profile = profiled["plan"]
        self.assertFalse(profile.pop("reverse_parameter_order"))  # the case this test is about
        path = os.path.join(self.dir, "profile.json")
        with open(path, "w") as f:
            json.dump(profile, f)
        tuned = subprocess.run([self.env["TILEBANK_BIN"], "tune", "-j", "4", "--gradients", path],
                               env=self.env, capture_output=True, text=True)
        self.assertEqual(tuned.returncode, 0, tuned.stderr)
        plain, _ = self.train("reordered", 12)
        applied, log = self.train("reordered-fusion", 12)
        self.assertEqual(applied["state_at_start"], "pending")  # the guessed order missed ...
        self.assertIn("the bank's plan for the observed ready order applied: 1 segments", log)  # ... the observed one hit
        self.assertEqual((applied["state"], applied["truth"], applied["plan"]), ("applied", True, [14]))
        self.assertSameParameters(plain["params"], applied["params"])
        # Without the entry the observed order misses as well, and nothing is applied.
        subprocess.run(["rm", "-rf", self.env["TUNE_BANK_PATH"]], check=True)
        missed, log = self.train("reordered-fusion", 3)
        self.assertNotIn("observed ready order applied", log)
        self.assertEqual((missed["state_at_start"], missed["state"], missed["truth"], missed["plan"]), ("pending", "none", False, None))

    def test_bad_mode_is_refused(self):
        done = self.train("fusion", 1, gdat="sometimes", expect_ok=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("TILEBANK_GDAT must be 'tune' or 'off'", done.stderr)

    def test_off_applies_nothing(self):
        result, _ = self.train("fusion", 2, gdat="off")
        self.assertIsNone(result["plan"])


if __name__ == "__main__":
    unittest.main(verbosity=2)

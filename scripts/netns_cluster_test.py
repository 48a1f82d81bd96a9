#!/usr/bin/python3
"""Tests scripts/netns_cluster.sh: two nodes on a 1 Gbit/s link, gloo ranks started in them by
tilebank.launch --netns; an 8 MiB AllReduce between them takes what the link rate says (each rank
sends and receives about 8 MiB: 67 ms at 1 Gbit/s), not what loopback takes; `down` removes every
namespace; bad arguments exit 2. Needs root (network namespaces), as the cluster script does.

    /usr/bin/python3 scripts/netns_cluster_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "netns_cluster.sh")

JOB = r'''
import json, statistics, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(2 << 20)  # 8 MiB
dist.all_reduce(t)
times = []
for _ in range(3):
    dist.barrier()
    start = time.perf_counter()
    dist.all_reduce(t)
    times.append((time.perf_counter() - start) * 1000)
if dist.get_rank() == 0:
    with open(sys.argv[1], "w") as f:
        json.dump({"ms": statistics.median(times), "sum": t[0].item()}, f)
'''


def namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(("tbnode", "tbswitch"))]


class NetnsClusterTest(unittest.TestCase):
    def tearDown(self):
        subprocess.run(["bash", SCRIPT, "down"], check=False)

    def test_a_link_costs_what_its_rate_says(self):
        up = subprocess.run(["bash", SCRIPT, "up", "2", "1gbit"], capture_output=True, text=True)
        self.assertEqual(up.returncode, 0, "could not make the namespaces: " + up.stderr)
        self.assertEqual(sorted(namespaces()), ["tbnode0", "tbnode1", "tbswitch"])
        with tempfile.TemporaryDirectory() as d:
            job, out = os.path.join(d, "job.py"), os.path.join(d, "out.json")
            with open(job, "w") as f:
                f.write(JOB)
            env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
            done = subprocess.run([sys.executable, "-m", "tilebank.launch", "--nproc", "2", "--netns", "--master-port", "29840",
                                   job, out], env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(done.returncode, 0, done.stderr[-3000:])
            with open(out) as f:
                result = json.load(f)
        self.assertEqual(result["sum"], 16.0)  # ones, summed over two ranks four times
        self.assertGreater(result["ms"], 50.0, "an 8 MiB AllReduce over 1 Gbit/s cannot take less than about 67 ms")
        self.assertLess(result["ms"], 1000.0)
        subprocess.run(["bash", SCRIPT, "down"], check=True)
        self.assertEqual(namespaces(), [])

    def test_bad_arguments_exit_2(self):
        for args in (["up", "1", "1gbit"], ["up", "2", "fast"], ["sideways"], ["up", "2"]):
            done = subprocess.run(["bash", SCRIPT] + args, capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, args)
            self.assertIn("netns_cluster.sh:", done.stderr)
        self.assertEqual(namespaces(), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)

"""Starts a data-parallel job's ranks as torchrun does (Debian 12's torchrun fails under Python 3.11
in its argument handling): RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT in each rank's environment. A rank that fails stops the others; the exit code is the
first failure's.

    PYTHONPATH=python /usr/bin/python3 -m tilebank.launch --nproc 2 train.py [ARGS...]
    ... -m tilebank.launch --nproc 2 --netns train.py    # rank i on node tbnode{i} of
                                                          # scripts/netns_cluster.sh (one rank a node)
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tilebank.launch", description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, required=True, help="ranks to start")
    ap.add_argument("--master-addr", default="127.0.0.1")
    ap.add_argument("--master-port", type=int, default=29500)
    ap.add_argument("--netns", action="store_true",
                    help="rank i in network namespace tbnode{i} (scripts/netns_cluster.sh up), talking over its eth0")
    ap.add_argument("--threads", type=int, default=0, help="OMP_NUM_THREADS of each rank (default: left as it is)")
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if a.nproc < 1:
        ap.error("--nproc must be at least 1")
    procs = []
    for rank in range(a.nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(0 if a.netns else rank), WORLD_SIZE=str(a.nproc),
                   LOCAL_WORLD_SIZE=str(1 if a.netns else a.nproc), MASTER_ADDR=a.master_addr,
                   MASTER_PORT=str(a.master_port))
        if a.threads:
            env["OMP_NUM_THREADS"] = str(a.threads)
        cmd = [sys.executable, a.script] + a.args
        if a.netns:
            env["MASTER_ADDR"] = "10.77.0.1"
            env["GLOO_SOCKET_IFNAME"] = "eth0"
            cmd = ["ip", "netns", "exec", f"tbnode{rank}"] + cmd
        procs.append(subprocess.Popen(cmd, env=env))
    code = 0
    try:
        while procs:
            for p in list(procs):
                rc = p.poll()
                if rc is None:
                    continue
                procs.remove(p)
                if rc != 0 and code == 0:
                    code = rc
                    for other in procs:
                        other.send_signal(signal.SIGTERM)
            time.sleep(0.05)
    except KeyboardInterrupt:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        code = 130
    return code


if __name__ == "__main__":
    sys.exit(main())

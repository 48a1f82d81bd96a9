"""The tilebank command line, as the Python side calls it: the search, the bank and the result
files are C++; Python hands them files and reads their JSON.

The binary: TILEBANK_BIN, else the repository's build/tilebank (what scripts/build.sh makes),
else `tilebank` on PATH. The bank and the soc_version are the command line's defaults
(TUNE_BANK_PATH, ASCEND_CACHE_PATH/aoe_data, ~/.local/share/tilebank; this host's soc_version).
"""
import json
import os
import shutil
import subprocess

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TilebankError(RuntimeError):
    """The command line refused a request (its message is the error's text)."""


def binary():
    explicit = os.environ.get("TILEBANK_BIN")
    if explicit:
        return explicit
    built = os.path.join(_REPO, "build", "tilebank")
    if os.access(built, os.X_OK):
        return built
    found = shutil.which("tilebank")
    if found:
        return found
    raise TilebankError("no tilebank binary: run `bash scripts/build.sh`, or set TILEBANK_BIN")


def run(args, check=True):
    """Runs `tilebank ARGS`; returns (exit code, stdout). With `check`, a non-zero exit raises."""
    done = subprocess.run([binary()] + list(args), capture_output=True, text=True)
    if check and done.returncode != 0:
        raise TilebankError(f"tilebank {' '.join(args[:3])}: {done.stderr.strip() or done.stdout.strip()}")
    return done.returncode, done.stdout


def query_grad(description):
    """The bank's grad entry (the JSON `bank query` prints) for a gradient problem description
    (dict: gradients, world_size, ranks_per_node, communicator), or None: a miss, or no bank yet."""
    code, out = run(["bank", "query", json.dumps(description), "--json"], check=False)
    if code != 0:
        return None
    for answer in json.loads(out):
        if answer.get("state") == "hit" and "entry" in answer:
            return answer["entry"]
    return None

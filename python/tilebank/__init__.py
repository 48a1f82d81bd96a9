"""tilebank for Python.

With the extension CMake builds into <build>/python/tilebank/ (PYTHONPATH=<build>/python):
  tilebank.InferenceSession(path, bank=None, soc=None, threads=None)   run an ONNX model on numpy arrays
  tilebank.tune(model_or_ops, job_type=2, ...) -> TuneResult           a tuning job with progress and callbacks
  tilebank.Bank(root=None, soc=None, readonly=True)                    a knowledge bank
  tilebank.report(result_files, path) / tilebank.bank_report(...)      the HTML reports
  import tilebank.onnxruntime as ort                                   ONNX Runtime's Python API on tilebank (a drop-in)
Errors raise tilebank.Error (InvalidInputError, NotFoundError, RefusedError) with the CLI's messages.

Without the extension (the source tree alone), the PyTorch adapter for gradient fusion tuning (GDAT):
tilebank.gradient_profile records what the command line plans from; tilebank.torch applies its plans.
"""

try:
    from tilebank._native import (  # noqa: F401
        Bank,
        Error,
        InferenceSession,
        InvalidInputError,
        NotFoundError,
        RefusedError,
        __version__,
        soc_version,
    )
    from tilebank.tuning import TuneResult, bank_report, report, tune  # noqa: F401
except ImportError as error:  # the source tree without a build: the GDAT adapter only
    _native_missing = error

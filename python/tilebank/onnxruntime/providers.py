"""Execution providers as ONNX Runtime scripts name them.

tilebank has one: "TilebankExecutionProvider", its kernels on this machine's CPU, bound to the
knowledge bank's policies. "CPUExecutionProvider" is accepted as the same one, so a script written
for ONNX Runtime's CPU provider runs unchanged. Other providers ONNX Runtime knows (CUDA, TensorRT,
...) are not available here: a session asked for them warns and runs on the CPU, as ONNX Runtime
does for a provider its build lacks; a name no runtime knows is refused.

TilebankExecutionProvider's options: "bank" (the bank root; default as the command line's:
TUNE_BANK_PATH, ...), "soc_version" (must be this machine's when given).
"""
import collections.abc
import warnings

TILEBANK = "TilebankExecutionProvider"
CPU = "CPUExecutionProvider"
TILEBANK_OPTIONS = ("bank", "soc_version")

# ONNX Runtime's providers, highest priority first, CPU last (its get_all_providers order), with
# tilebank's first.
_ALL = [
    TILEBANK, "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider", "ROCMExecutionProvider",
    "OpenVINOExecutionProvider", "DnnlExecutionProvider", "TvmExecutionProvider", "VitisAIExecutionProvider",
    "QNNExecutionProvider", "NnapiExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider",
    "ArmNNExecutionProvider", "ACLExecutionProvider", "DmlExecutionProvider", "RknpuExecutionProvider",
    "WebNNExecutionProvider", "XnnpackExecutionProvider", "CANNExecutionProvider", "AzureExecutionProvider", CPU,
]


def get_all_providers():
    return list(_ALL)


def get_available_providers():
    return [TILEBANK, CPU]


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """(names, options): providers as names or (name, options) pairs, or names with a parallel list
    of option dicts; option keys and values become strings; a repeated provider warns and the first
    stays; a name not in `available_provider_names` warns. ValueError for anything malformed."""
    if providers is None:
        return [], []
    if not isinstance(providers, collections.abc.Sequence) or isinstance(providers, str):
        raise ValueError("providers must be a sequence of names or of (name, options) pairs")
    if provider_options is not None:
        if not isinstance(provider_options, collections.abc.Sequence) or isinstance(provider_options, str):
            raise ValueError("provider_options must be a sequence of dicts, one per provider")
        if len(provider_options) != len(providers):
            raise ValueError(f"{len(providers)} providers and {len(provider_options)} provider_options: they go in pairs")
    named = {}

    def add(name, options):
        if not isinstance(options, collections.abc.Mapping):
            raise ValueError(f"the options of provider '{name}' must be a dict")
        if name not in available_provider_names:
            warnings.warn(f"Specified provider '{name}' is not in available provider names. "
                          f"Available providers: '{', '.join(available_provider_names)}'", stacklevel=3)
        if name in named:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.", stacklevel=3)
            return
        named[name] = {str(k): str(v) for k, v in options.items()}

    for i, provider in enumerate(providers):
        if isinstance(provider, str):
            add(provider, provider_options[i] if provider_options is not None else {})
        elif (isinstance(provider, tuple) and len(provider) == 2 and isinstance(provider[0], str)
              and provider_options is None):
            add(provider[0], provider[1])
        else:
            raise ValueError(f"provider {provider!r}: give a name, or a (name, options) pair without provider_options")
    return list(named), list(named.values())


def session_providers(providers, provider_options):
    """The providers a session runs with and their options: the available ones asked for, in order
    (both when none are asked for); RuntimeError for a name ONNX Runtime does not know; a known but
    unavailable one warns and is left out. Unknown options of TilebankExecutionProvider are refused."""
    names, options = check_and_normalize_provider_args(providers, provider_options, _ALL)
    for name in names:
        if name not in _ALL:
            raise RuntimeError(f"Unknown Provider Type: {name}")
    chosen = [(n, o) for n, o in zip(names, options) if n in get_available_providers()]
    dropped = [n for n in names if n not in get_available_providers()]
    if dropped:
        warnings.warn(f"{', '.join(dropped)} not available on tilebank: the session runs on the CPU "
                      f"({', '.join(get_available_providers())})", stacklevel=3)
    if not chosen:
        chosen = [(TILEBANK, {}), (CPU, {})]
    for name, opts in chosen:
        unknown = sorted(set(opts) - set(TILEBANK_OPTIONS)) if name == TILEBANK else []
        if unknown:
            raise ValueError(f"{TILEBANK} has no option {', '.join(unknown)} (it takes {', '.join(TILEBANK_OPTIONS)})")
    return [n for n, _ in chosen], {n: o for n, o in chosen}

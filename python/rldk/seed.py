"""Seeds for reproducible training runs.

    import rldk
    rldk.seed.set_global_seed(42)               # random, NumPy, torch (CPU + CUDA), transformers/accelerate
    with rldk.seed.seed_context(7):             # a seeded block; every RNG state is restored on exit
        noise = torch.randn(3)
    rldk.seed.rng_fingerprint()                 # short hash of all RNG states: equal across replicas, or not

What a running process cannot do for itself: PYTHONHASHSEED is read once when the interpreter starts, and cuBLAS
reads CUBLAS_WORKSPACE_CONFIG when CUDA initializes. Export both before Python starts (`eval "$(rldk seed --env)"`);
set_global_seed sets CUBLAS_WORKSPACE_CONFIG when CUDA is not initialized yet and warns about PYTHONHASHSEED.
"""
import contextlib
import hashlib
import os
import random
import sys
import warnings

__all__ = ["set_global_seed", "seed_context", "rng_fingerprint", "SeedReport"]

_SEED_MODULUS = 2 ** 32  # numpy's legacy seeding accepts [0, 2**32); the same seed is used everywhere
_CUBLAS_DETERMINISTIC = (":4096:8", ":16:8")


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


class SeedReport(dict):
    """What set_global_seed did: {"seed", "seeded": [...], "deterministic": {...}, "notes": [...]}."""


def _normalize(seed):
    if seed is None:
        env = os.environ.get("RLDK_SEED")
        if env is None:
            raise ValueError("set_global_seed: no seed given and RLDK_SEED is not set")
        try:
            seed = int(env)
        except ValueError:
            raise ValueError("set_global_seed: RLDK_SEED=%r is not an integer" % env) from None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError("set_global_seed: seed must be an int, got %s" % type(seed).__name__)
    return seed % _SEED_MODULUS  # negative seeds too: -1 -> 4294967295


def _set_torch_determinism(torch, deterministic, report):
    if not deterministic:
        # Leave the flags as the script set them: seeding alone was asked for.
        report["deterministic"] = {"use_deterministic_algorithms": torch.are_deterministic_algorithms_enabled()}
        return
    cuda_initialized = torch.cuda.is_available() and torch.cuda.is_initialized()
    workspace = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    if workspace not in _CUBLAS_DETERMINISTIC:
        if cuda_initialized:
            report["notes"].append("CUDA is already initialized: CUBLAS_WORKSPACE_CONFIG=:4096:8 must be exported "
                                   "before the process starts (eval \"$(rldk seed --env)\")")
        else:
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    report["deterministic"] = {
        "use_deterministic_algorithms": True,
        "cudnn.deterministic": True,
        "cudnn.benchmark": False,
        "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
    }


def set_global_seed(seed=None, deterministic=True):
    """Seed every random-number generator a training script uses, and (by default) make torch deterministic.

    seed: an int (taken modulo 2**32), or None to read $RLDK_SEED. Seeds Python's random, NumPy's legacy global
    generator, torch (CPU and every CUDA device), and transformers/accelerate's set_seed when those are importable.
    deterministic: torch.use_deterministic_algorithms(True), cudnn.deterministic=True, cudnn.benchmark=False and
    CUBLAS_WORKSPACE_CONFIG=:4096:8 (when CUDA is not initialized yet). False seeds only and leaves the flags.
    Returns a SeedReport. Warns when PYTHONHASHSEED is not fixed (it cannot be from inside the process).
    """
    seed = _normalize(seed)
    report = SeedReport(seed=seed, seeded=["random"], deterministic={}, notes=[])
    random.seed(seed)
    np = _optional("numpy")
    if np is not None:
        np.random.seed(seed)
        report["seeded"].append("numpy")
    torch = _optional("torch")
    if torch is not None:
        torch.manual_seed(seed)  # also seeds every CUDA device
        report["seeded"].append("torch")
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
            report["seeded"].append("torch.cuda")
        _set_torch_determinism(torch, deterministic, report)
    for module_name in ("transformers", "accelerate.utils"):
        # Only when already imported: importing transformers costs seconds, and if the script does not use it
        # there is nothing of it to seed.
        module = sys.modules.get(module_name)
        if module is not None and hasattr(module, "set_seed"):
            module.set_seed(seed)
            report["seeded"].append(module_name.split(".")[0])
    hashseed = os.environ.get("PYTHONHASHSEED")
    if hashseed is None or not hashseed.isdigit():
        note = ("PYTHONHASHSEED is %s: set/dict-of-str iteration order differs between runs; export it before "
                "Python starts (eval \"$(rldk seed --env)\")" % ("unset" if hashseed is None else repr(hashseed)))
        report["notes"].append(note)
        if os.environ.get("RLDK_SILENCE_SEED_WARNINGS") != "1":
            warnings.warn(note, RuntimeWarning, stacklevel=2)
    return report


def _capture_states():
    states = {"random": random.getstate()}
    np = _optional("numpy")
    if np is not None:
        states["numpy"] = np.random.get_state()
    torch = _optional("torch")
    if torch is not None:
        states["torch"] = torch.get_rng_state()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            states["torch.cuda"] = torch.cuda.get_rng_state_all()
    return states


def _restore_states(states):
    random.setstate(states["random"])
    if "numpy" in states:
        _optional("numpy").random.set_state(states["numpy"])
    torch = _optional("torch")
    if "torch" in states:
        torch.set_rng_state(states["torch"])
    if "torch.cuda" in states:
        torch.cuda.set_rng_state_all(states["torch.cuda"])


@contextlib.contextmanager
def seed_context(seed):
    """Run a block with every RNG (random, NumPy, torch CPU/CUDA) seeded with `seed`; restore all states on exit.

    Determinism flags are left alone: the block changes only random-number streams, and code after it continues
    exactly as if the block had not drawn anything.
    """
    seed = _normalize(seed)
    saved = _capture_states()
    try:
        random.seed(seed)
        np = _optional("numpy")
        if np is not None:
            np.random.seed(seed)
        torch = _optional("torch")
        if torch is not None:
            torch.manual_seed(seed)
        yield seed
    finally:
        _restore_states(saved)


def rng_fingerprint(length=16):
    """A short hex hash of the current states of random, NumPy and torch (CPU, and CUDA when initialized).

    Two processes that seeded the same way and drew the same numbers print the same fingerprint; log it at a few
    steps to find where replicas' random streams part. Reading the states does not advance them.
    """
    digest = hashlib.sha256()
    for name, state in sorted(_capture_states().items()):
        digest.update(name.encode())
        if name == "random":
            digest.update(repr(state).encode())
        elif name == "numpy":
            kind, keys, pos, has_gauss, cached = state
            digest.update(kind.encode())
            digest.update(keys.tobytes())
            digest.update(repr((int(pos), int(has_gauss), float(cached))).encode())
        elif name == "torch":
            digest.update(state.numpy().tobytes())
        else:
            for device_state in state:
                digest.update(device_state.numpy().tobytes())
    return digest.hexdigest()[:length]

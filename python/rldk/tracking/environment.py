"""The software environment of a run: interpreter, platform, every installed distribution, torch/CUDA settings and the
environment variables that change numerics, data order or parallelism. Secrets are never recorded."""
import importlib.metadata
import os
import platform
import re
import socket
import sys

# Variables recorded by exact name, and by prefix. Only these: the rest of the environment is noise at best
# (paths, shells, terminals) and secrets at worst.
ENV_NAMES = frozenset({
    "PYTHONHASHSEED", "PYTHONOPTIMIZE", "CUBLAS_WORKSPACE_CONFIG", "TOKENIZERS_PARALLELISM", "CUDNN_DETERMINISTIC",
    "CUDNN_BENCHMARK", "NVIDIA_TF32_OVERRIDE", "TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC",
    "TF_ENABLE_ONEDNN_OPTS", "RLDK_SEED", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK",
})
ENV_PREFIXES = ("CUDA_", "CUBLAS", "CUDNN_", "NCCL_", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "HF_", "HUGGINGFACE_",
                "TRANSFORMERS_", "TORCH_", "PYTORCH_", "ACCELERATE_", "DEEPSPEED_", "VLLM_", "XLA_", "TRL_")
# A name containing one of these is dropped whatever list it matched. "TOKENIZER" is taken out of the name first,
# so TOKENIZERS_PARALLELISM is kept while HF_TOKEN is not.
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
_URL_USERINFO = re.compile(r"(://)[^/@\s]+@")


def is_secret_name(name):
    upper = name.upper().replace("TOKENIZER", "")
    return any(word in upper for word in SECRET_WORDS)


def recorded_env_vars(environ=None):
    """{name: value} of the allowlisted, non-secret variables; credentials inside URLs (user:pass@) are blanked."""
    environ = os.environ if environ is None else environ
    out = {}
    for name, value in environ.items():
        if name not in ENV_NAMES and not name.startswith(ENV_PREFIXES):
            continue
        if is_secret_name(name):
            continue
        out[name] = _URL_USERINFO.sub(r"\1***@", value)
    return out


def installed_packages():
    """{distribution name (lowercase): version} for every distribution importlib.metadata sees, in sys.path order:
    when one name is installed twice, the copy that `import` would find first wins."""
    packages = {}
    for dist in importlib.metadata.distributions():
        try:
            name = dist.metadata["Name"]
        except Exception:  # noqa: BLE001 - a broken METADATA file: skip that distribution, not the run
            continue
        if not name:
            continue
        packages.setdefault(name.lower(), dist.version or "")
    return dict(sorted(packages.items()))


def torch_state():
    """torch's version, CUDA/cuDNN, GPU names and determinism settings; None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    except Exception as e:  # noqa: BLE001 - installed but broken (a CUDA library mismatch): say so, carry on
        return {"import_error": "%s: %s" % (type(e).__name__, e)}
    state = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "gpus": [],
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "num_threads": int(torch.get_num_threads()),
    }
    try:
        version = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        state["cudnn"] = str(version) if version is not None else None
    except Exception:  # noqa: BLE001 - a CPU build may raise instead of returning None
        state["cudnn"] = None
    if torch.cuda.is_available():
        state["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        state["tf32_matmul"] = bool(torch.backends.cuda.matmul.allow_tf32)
        state["tf32_cudnn"] = bool(torch.backends.cudnn.allow_tf32)
    return state


def capture_environment():
    """The manifest's "environment" object."""
    frameworks = {}
    torch = torch_state()
    if torch is not None:
        frameworks["torch"] = torch
    return {
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "platform": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
            "hostname": socket.gethostname(),
        },
        "packages": installed_packages(),
        "frameworks": frameworks,
        "env_vars": recorded_env_vars(),
    }


def refresh_runtime_settings(environment):
    """Re-read what a script changes after start (set_seeds, the trainer's setup): env vars and torch flags."""
    environment["env_vars"] = recorded_env_vars()
    if "torch" in sys.modules and "torch" in environment.get("frameworks", {}):
        environment["frameworks"]["torch"] = torch_state()
    return environment

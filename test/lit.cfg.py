# -*- Python -*-
# lit configuration for the xlnetc test suite.

import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "XLNETC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".toml", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.xlnetc_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%golden", config.xlnetc_golden_dir))
config.substitutions.append(("%models", os.path.join(config.xlnetc_src_root, "models")))
config.substitutions.append(("%scripts", os.path.join(config.xlnetc_src_root, "scripts")))
config.substitutions.append(("%buildroot", config.xlnetc_obj_root))
config.substitutions.append(("%xlnetc", os.path.join(config.xlnetc_tools_dir, "xlnetc")))
config.substitutions.append(("%bindir", config.xlnetc_tools_dir))

tool_dirs = [config.xlnetc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["xlnet-opt", "xlnetc", "xlnetc-run"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# A sanitizer build (scripts/sanitize.sh): tests that cap the address space
# (ASan reserves terabytes of it) or expect std::bad_alloc (ASan reports a
# huge allocation instead of throwing) say "UNSUPPORTED: asan".
if "-fsanitize=address" in getattr(config, "xlnetc_cxx_flags", ""):
    config.available_features.add("asan")

# The golden cases live in ../shared/golden beside the repository.
if os.path.isdir(config.xlnetc_golden_dir):
    config.available_features.add("golden")

# GPU tests need a GPU that the CUDA driver reports (`xlnetc devices` says
# "cuda yes"); everywhere else they are unsupported, and tests of the
# no-GPU behaviour say "UNSUPPORTED: gpu".
import subprocess
# The kernel cache of the tests lives in the build tree, not in $HOME.
_kernel_cache = os.path.join(config.xlnetc_obj_root, "test", "kernel-cache")
config.environment["XLNETC_KERNEL_CACHE"] = _kernel_cache
# Its key too: lit passes no HOME, so the default (~/.config) is not there.
config.environment["XLNETC_KERNEL_CACHE_KEY"] = _kernel_cache + ".key"
try:
    _devices = subprocess.run(
        [os.path.join(config.xlnetc_tools_dir, "xlnetc"), "devices"],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, XLNETC_KERNEL_CACHE=_kernel_cache,
                 XLNETC_KERNEL_CACHE_KEY=_kernel_cache + ".key")).stdout
except Exception:
    _devices = ""
_answers = [line.split()[:2] for line in _devices.splitlines()]
if ["cuda", "yes"] in _answers:
    config.available_features.add("gpu")
# The emulated device (a host C++ compiler) and NVRTC (the CUDA toolkit):
# tests of the generated kernels need one or the other, not a GPU.
if ["emu", "yes"] in _answers:
    config.available_features.add("emu")
if ["nvrtc", "yes"] in _answers:
    config.available_features.add("nvrtc")
# The OpenBLAS kernels this CPU runs (the gemm-cores row, best first):
# gemm-skylakex, gemm-haswell, gemm-sandybridge; gemm-kernels.test runs the
# numerics under each.
for _line in _devices.splitlines():
    _words = _line.split()
    if _words[:2] == ["gemm-cores", "yes"]:
        for _core in _words[2:]:
            if _core.startswith("("):
                break
            config.available_features.add("gemm-" + _core.lower())

# HuggingFace transformers for the export round trip (hf-roundtrip.test): a
# Python that imports torch, transformers, sentencepiece and safetensors —
# $XLNETC_HF_PYTHON, or the virtualenv scripts/hf-venv.sh makes. Without one
# the test is unsupported (the venv is ~5 GB: torch from PyPI brings CUDA).
_hf_python = os.environ.get("XLNETC_HF_PYTHON") or os.path.join(
    os.environ.get("XLNETC_HF_VENV", os.path.join(os.path.expanduser("~"), ".cache",
                                                  "xlnetc", "hf-venv")), "bin", "python")
try:
    _hf_ok = os.path.exists(_hf_python) and subprocess.run(
        [_hf_python, "-c", "import torch, transformers, sentencepiece, safetensors"],
        capture_output=True, timeout=300).returncode == 0
except Exception:
    _hf_ok = False
if _hf_ok:
    config.available_features.add("hf-transformers")
    config.substitutions.append(("%hfpython", _hf_python))
llvm_config.with_system_environment(["XLNETC_HF_PYTHON", "XLNETC_HF_VENV"])

# TensorBoard's own event reader (tensorboard.test): the `tensorboard`
# package in the virtualenv scripts/tb-venv.sh makes, and the plugin
# libxlnetc-tensorboard.so (built when CMake finds protobuf and ISA-L).
_tb_python = os.path.join(
    os.environ.get("XLNETC_TB_VENV", os.path.join(os.path.expanduser("~"), ".cache",
                                                  "xlnetc", "tb-venv")), "bin", "python")
try:
    _tb_ok = os.path.exists(_tb_python) and os.path.exists(
        os.path.join(config.xlnetc_obj_root, "lib", "libxlnetc-tensorboard.so")) and \
        subprocess.run([_tb_python, "-c", "import tensorboard"], capture_output=True,
                       timeout=120).returncode == 0
except Exception:
    _tb_ok = False
# Not under ASan: its runtime refuses the plugin's dlopen with RTLD_DEEPBIND.
if _tb_ok and "asan" not in config.available_features:
    config.available_features.add("tensorboard")
    config.substitutions.append(("%tbpython", _tb_python))
llvm_config.with_system_environment(["XLNETC_TB_VENV"])

# Data-parallel runs (data-parallel.test): Open MPI's mpirun and the MPI
# plugin (built when CMake found MPI). Root needs --allow-run-as-root;
# --oversubscribe lets -np 2 run on a machine that reports one slot.
import shutil
_mpirun = shutil.which("mpirun")
if _mpirun and os.path.exists(os.path.join(config.xlnetc_obj_root, "lib", "libxlnetc-mpi.so")):
    config.available_features.add("mpi")
    # Under ASan, MPI's processes do not check leaks: Open MPI's own
    # allocations at MPI_Init are reported from components it has unloaded
    # (no symbols to suppress them by); address and UB errors still stop
    # the run. The one-process runs of the same code check leaks.
    _mpi_env = (" -x ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:detect_odr_violation=0"
                ":allow_user_poisoning=0" if "asan" in config.available_features else "")
    config.substitutions.append(
        ("%mpirun", _mpirun + " --allow-run-as-root --oversubscribe"
         # shared memory without cross-process copies: containers often
         # forbid the ptrace-based ones
         " --mca btl_vader_single_copy_mechanism none" + _mpi_env))

# Slurm (data-parallel-srun.test): srun with the PMIx plugin and a partition
# that is up, i.e. running slurmctld and slurmd (not in CI).
_srun = shutil.which("srun")
if _srun and "mpi" in config.available_features:
    try:
        # a partition that is up with a node that can run work
        _up = subprocess.run(["sinfo", "-h", "-o", "%a %T"], capture_output=True, text=True,
                             timeout=10)
        _plugins = subprocess.run([_srun, "--mpi=list"], capture_output=True, text=True,
                                  timeout=10)
        _ready = any(line.split()[:1] == ["up"] and
                     line.split()[1].rstrip("*~#") in ("idle", "mixed", "allocated")
                     for line in _up.stdout.splitlines() if len(line.split()) >= 2)
        if _up.returncode == 0 and _ready and "pmix" in _plugins.stdout + _plugins.stderr:
            config.available_features.add("slurm")
            # srun passes its environment on; under ASan, as for %mpirun,
            # MPI's processes do not check leaks.
            config.substitutions.append(
                ("%srun", ("env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:"
                           "detect_odr_violation=0:allow_user_poisoning=0 "
                           if "asan" in config.available_features else "") +
                 _srun + " --mpi=pmix"))
    except Exception:
        pass

# A disk that fills up (disk-full.test): tmpfs mounts of a chosen size need
# root with CAP_SYS_ADMIN; where a trial mount fails the test is unsupported.
_probe = os.path.join(config.xlnetc_obj_root, "test", "tmpfs-probe")
try:
    os.makedirs(_probe, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", _probe],
                      capture_output=True, timeout=30).returncode == 0:
        subprocess.run(["umount", _probe], capture_output=True, timeout=30)
        config.available_features.add("tmpfs")
except Exception:
    pass

# Features the test command promises (scripts/run-tests.sh sets
# XLNETC_REQUIRE_FEATURES to what scripts/install-deps.sh installs): one
# that is missing is an error, not a silently unsupported test.
for _feature in os.environ.get("XLNETC_REQUIRE_FEATURES", "").split():
    if _feature not in config.available_features:
        lit_config.fatal(f"XLNETC_REQUIRE_FEATURES names '{_feature}', which this build and "
                         f"machine lack (tests needing it would be unsupported): see "
                         f"docs/Testing.md")

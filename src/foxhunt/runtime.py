"""Process-level plumbing every room shares, one home each: the torch device, autocast,
atomic writes and JSON / JSON-lines files.

Atomic writes: a file is written to ``<name>.tmp``, flushed to disk (fsync) and renamed over the
target, so a crash or a kill leaves either the old file or the new one, never half of one. A
directory is built as ``<name>.<pid>.tmp/`` and renamed when complete.

JSON lines: a log is appended one flushed line at a time, so a kill can tear at most the last
line; :func:`read_jsonl` skips such a torn *last* line and refuses a corrupt line anywhere else.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foxhunt.errors import InputError, ModelDirError
from foxhunt.train_config import Precision

if TYPE_CHECKING:  # torch is imported where it is used: the data commands never load it
    import torch


# --- device and precision --------------------------------------------------------------------


def parse_device(device: str) -> torch.device:
    """Parse ``--device``; :class:`InputError` if it is not a device this machine has."""
    import torch

    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise InputError(f"--device {device!r}: not a torch device ({e})") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {device}: CUDA is not available on this machine")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise InputError(f"--device {device}: only {torch.cuda.device_count()} CUDA devices")
    return dev


_NATIVE_BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def native_bf16(device: torch.device) -> bool:
    """Whether ``device`` computes bf16 natively (not emulated through fp32).

    CPU: the ``avx512_bf16`` or ``amx_bf16`` flag in ``/proc/cpuinfo`` (Linux; False elsewhere),
    unless oneDNN is capped below bf16 (:data:`ONEDNN_ISA_ENVS`).
    CUDA: ``torch.cuda.is_bf16_supported`` without emulation.
    """
    if device.type == "cuda":
        import torch

        return torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)
    return device.type == "cpu" and _cpu_has_native_bf16()


@functools.cache
def _cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where it cannot be read)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return frozenset(line.partition(":")[2].split())


ONEDNN_ISA_ENVS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
"""oneDNN's cap on the instructions it JITs (``AVX2``, ``AVX512_CORE``, ``AVX512_CORE_BF16``,
...; ``DNNL_`` is its older name). Under a cap below the CPU's own ISA oneDNN refuses its bf16
LSTM (``could not create a primitive descriptor``) and uses no AVX-512, so the flags below read
it: ``ONEDNN_MAX_CPU_ISA=AVX2`` on an AVX-512 BF16 CPU runs foxhunt as an AVX2-only CPU would
(``make test-avx2``, docs/testing.md)."""

_BF16_ISAS = ("AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX10_")


_ONEDNN_ISAS = frozenset(
    {
        "SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI",
        "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX512_CORE_AMX", "AVX512_CORE_AMX_FP16",
        "AVX10_1_512", "AVX10_1_512_AMX", "AVX10_1_512_AMX_FP16", "AVX10_2_512",
        "AVX10_2_512_AMX_2",
    }
)  # fmt: skip
"""The caps oneDNN accepts; it ignores any other value (a typo such as ``AVX512``) and runs its
full ISA, and so does this module."""


def _onednn_isa_cap() -> str | None:
    """The ISA oneDNN is capped at, upper case; None when uncapped. The first of
    :data:`ONEDNN_ISA_ENVS` that is set decides, as in oneDNN: ``ALL``, ``DEFAULT`` or a name it
    does not know leave it uncapped."""
    for name in ONEDNN_ISA_ENVS:
        value = os.environ.get(name, "").strip().upper()
        if value:
            return value if value in _ONEDNN_ISAS else None
    return None


def _cpu_has_native_bf16() -> bool:
    cap = _onednn_isa_cap()
    if cap is not None and not cap.startswith(_BF16_ISAS):
        return False
    return any(f in _cpu_flags() for f in _NATIVE_BF16_CPU_FLAGS)


def cpu_has_avx512() -> bool:
    """Whether the CPU has AVX-512 (``avx512f``) and oneDNN may use it (no cap below
    ``AVX512_CORE``): oneDNN then JITs wider kernels and its processes hold more memory beyond
    their tensors (memory/process.py)."""
    cap = _onednn_isa_cap()
    if cap is not None and not cap.startswith(("AVX512", "AVX10_")):
        return False
    return "avx512f" in _cpu_flags()


FORCE_FP32_ENV = "FOXHUNT_FORCE_FP32"
"""Environment variable: ``1`` makes ``auto`` resolve to fp32 on every device, as on a CPU
without native bf16 (``FOXHUNT_FORCE_FP32=1 make test`` runs the suite as an AVX2-only CPU
would; docs/testing.md). Precisions given explicitly are kept."""


def resolve_precision(precision: str, device: torch.device) -> Precision:
    """``auto`` -> bf16 where ``device`` has native bf16 (:func:`native_bf16`), else fp32 (and
    fp32 everywhere under ``FOXHUNT_FORCE_FP32=1``); any other precision is returned as it
    is."""
    if precision == "auto":
        if os.environ.get(FORCE_FP32_ENV) == "1":
            return "fp32"
        return "bf16" if native_bf16(device) else "fp32"
    return precision  # type: ignore[return-value]


def emulated_precision_warning(precision: str, device: torch.device) -> str | None:
    """A warning when ``precision`` is bf16 on a CPU that emulates it through fp32 (no
    ``avx512_bf16``/``amx_bf16``): every bf16 op then converts to and from fp32, ~3.5x slower
    than fp32 in issue 27's run. None when the precision runs natively."""
    if precision != "bf16" or device.type != "cpu" or native_bf16(device):
        return None
    return (
        "--precision bf16 on this CPU (no avx512_bf16 or amx_bf16) is emulated through fp32: "
        "expect steps several times slower than fp32 (~3.5x measured); --precision auto "
        "chooses fp32 here"
    )


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager[Any]:
    """Autocast to bf16/fp16 on ``device``, or nothing for fp32 (``auto``: resolved first)."""
    precision = resolve_precision(precision, device)
    if precision == "fp32":
        return contextlib.nullcontext()
    import torch

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    return torch.autocast(device_type=device.type, dtype=dtype)


# --- atomic writes ---------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield ``<path>.tmp`` to write; on success fsync it and rename it over ``path``.

    On any exception (KeyboardInterrupt included) the temp file is removed and ``path`` is left
    as it was. The new file gets the usual 0644-style permissions (umask applied).
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        os.chmod(tmp, _file_mode())  # some writers (safetensors) create 0600 files
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _file_mode() -> int:
    """The mode a plain ``open()`` gives a new file: 0666 less the process umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_dir(path: Path, *, replace: bool = True) -> Iterator[Path]:
    """Yield an empty ``<path>.<pid>.tmp/`` to fill; on success rename it to ``path``.

    An existing ``path`` is replaced only once the new directory is complete; with
    ``replace=False`` only an empty one is (a directory another process completed meanwhile
    makes the rename fail with ``OSError``, and stays as it is). On any exception the temporary
    directory is removed.
    """
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if replace and path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)  # rename(2): over an empty directory only
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2) + "\n")


def remove_stale_tmp(directory: Path) -> list[Path]:
    """Delete ``*.tmp`` files a killed process left behind; return what was removed."""
    stale = sorted(Path(directory).glob("*.tmp")) if Path(directory).is_dir() else []
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


# --- JSON and JSON lines ---------------------------------------------------------------------


def json_safe(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float made ``None``: strict JSON (``null``), which
    Python's ``json`` would write as the bare tokens ``NaN`` and ``Infinity`` that other
    readers (``jq``, JavaScript, Go) refuse. For results where a number can be undefined: a
    relative difference against a baseline whose loss is 0 (a price that never moved)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def read_json(path: Path, what: str = "file") -> Any:
    """Read a JSON file, turning absence or corruption into :class:`ModelDirError`."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError as e:
        raise ModelDirError(f"{path}: {what} is missing") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelDirError(f"{path}: {what} is corrupt (not valid JSON)") from e


def append_jsonl(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line and flush it (a crash loses at most the line being written)."""
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def read_jsonl(path: Path, *, missing_ok: bool = True) -> list[dict[str, Any]]:
    """Read a JSON-lines log: one dict per line.

    A torn last line (a kill during :func:`append_jsonl`) is skipped; a corrupt line anywhere
    else is an :class:`InputError` naming the line. A missing file is ``[]`` when
    ``missing_ok``, else an :class:`InputError`.
    """
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError as e:
        if missing_ok:
            return []
        raise InputError(f"{path}: cannot read (no such file)") from e
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    records = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            if i == last:  # torn by a kill while appending
                continue
            raise InputError(f"{path}: line {i + 1} is not JSON ({e.msg})") from e
        if isinstance(record, dict):
            records.append(record)
    return records


def truncate_jsonl(path: Path, keep: Callable[[dict[str, Any]], bool]) -> int:
    """Rewrite a JSON-lines log keeping only the records ``keep`` accepts (and no torn line).

    Used on ``--resume`` to drop what the discarded epoch logged. Returns the lines dropped.
    """
    if not Path(path).is_file():
        return 0
    n_lines = sum(1 for line in Path(path).read_text().splitlines() if line.strip())
    kept = [r for r in read_jsonl(path) if keep(r)]
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in kept))
    return n_lines - len(kept)

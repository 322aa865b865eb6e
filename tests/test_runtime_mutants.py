"""``foxhunt.runtime`` detail by detail: ``--device`` refusals word for word (CUDA's answers
faked, so they run on a CPU), native bf16 on CUDA, autocast's dtype per precision, the
emulated-bf16 warning's text, JSON and JSON-lines reading and appending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from foxhunt import runtime
from foxhunt.errors import InputError, ModelDirError


def _fake_cuda(monkeypatch: pytest.MonkeyPatch, *, available: bool, count: int = 0) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)


def test_parse_device_refusals_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError) as caught:
        runtime.parse_device("gpu")
    assert str(caught.value).startswith("--device 'gpu': not a torch device (")
    _fake_cuda(monkeypatch, available=False)
    for name in ("cuda", "cuda:0"):
        with pytest.raises(InputError) as caught:
            runtime.parse_device(name)
        assert str(caught.value) == f"--device {name}: CUDA is not available on this machine"
    assert runtime.parse_device("cpu") == torch.device("cpu")
    assert runtime.parse_device("cpu:0") == torch.device("cpu", 0)  # an index, not CUDA's


def test_parse_device_counts_cuda_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_cuda(monkeypatch, available=True, count=2)
    assert runtime.parse_device("cuda") == torch.device("cuda")
    assert runtime.parse_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(InputError) as caught:
        runtime.parse_device("cuda:2")
    assert str(caught.value) == "--device cuda:2: only 2 CUDA devices"


@pytest.mark.parametrize(
    ("available", "native", "want"),
    [(True, True, True), (True, False, False), (False, True, False)],
)
def test_native_bf16_on_cuda_asks_torch_without_emulation(
    monkeypatch: pytest.MonkeyPatch, available: bool, native: bool, want: bool
) -> None:
    asked: list[object] = []

    def supported(including_emulation: bool = True) -> bool:
        asked.append(including_emulation)
        return native if including_emulation is False else True

    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", supported)
    monkeypatch.setattr(runtime, "_cpu_has_native_bf16", lambda: True)  # not asked for CUDA
    assert runtime.native_bf16(torch.device("cuda")) is want
    assert asked in ([], [False])


@pytest.mark.parametrize(
    ("precision", "dtype"), [("bf16", torch.bfloat16), ("fp16", torch.float16)]
)
def test_autocast_casts_to_the_precisions_dtype(precision: str, dtype: torch.dtype) -> None:
    context = runtime.autocast(torch.device("cpu"), precision)
    assert isinstance(context, torch.autocast)
    assert context.fast_dtype == dtype and context.device == "cpu"
    with context:
        assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == dtype


def test_the_emulated_bf16_warning_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: frozenset({"avx2", "fma"}))
    assert runtime.emulated_precision_warning("bf16", torch.device("cpu")) == (
        "--precision bf16 on this CPU (no avx512_bf16 or amx_bf16) is emulated through fp32: "
        "expect steps several times slower than fp32 (~3.5x measured); --precision auto "
        "chooses fp32 here"
    )


def test_read_json_names_what_is_missing_or_corrupt(tmp_path: Path) -> None:
    with pytest.raises(ModelDirError) as caught:
        runtime.read_json(tmp_path / "a.json")
    assert str(caught.value) == f"{tmp_path / 'a.json'}: file is missing"
    (tmp_path / "b.json").write_text("{")
    with pytest.raises(ModelDirError) as caught:
        runtime.read_json(tmp_path / "b.json", "run record")
    assert str(caught.value) == f"{tmp_path / 'b.json'}: run record is corrupt (not valid JSON)"


def test_append_jsonl_writes_one_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    runtime.append_jsonl(path, {"a": 1})
    runtime.append_jsonl(path, {"b": [2, 3]})
    assert path.read_text() == '{"a": 1}\n{"b": [2, 3]}\n'
    assert runtime.read_jsonl(path) == [{"a": 1}, {"b": [2, 3]}]


def test_read_jsonl_skips_blank_lines_anywhere_and_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"a": 1}\n\n  \n{"b": 2}\n{"c": 3\n\n')
    assert runtime.read_jsonl(path) == [{"a": 1}, {"b": 2}]
    path.write_text('{"a": 1}\n{"c": \n{"b": 2}\n')
    with pytest.raises(InputError) as caught:
        runtime.read_jsonl(path)
    assert str(caught.value).startswith(f"{path}: line 2 is not JSON (")
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(InputError) as caught:
        runtime.read_jsonl(folder)
    assert str(caught.value) == f"{folder}: cannot read (Is a directory)"


def test_truncate_jsonl_of_no_file_drops_nothing(tmp_path: Path) -> None:
    assert runtime.truncate_jsonl(tmp_path / "none.jsonl", lambda r: True) == 0
    assert not (tmp_path / "none.jsonl").exists()
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps({"epoch": e}) + "\n" for e in (1, 2, 3)) + '{"epo')
    assert runtime.truncate_jsonl(path, lambda r: r["epoch"] < 3) == 2  # epoch 3 and the torn
    assert runtime.read_jsonl(path) == [{"epoch": 1}, {"epoch": 2}]

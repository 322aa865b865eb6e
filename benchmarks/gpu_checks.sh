#!/usr/bin/env bash
# Every CUDA check at once, for a session lent a GPU (docs/testing.md "CUDA checks").
# Run from the repository root with foxhunt importable (installed, or PYTHONPATH=src):
#   OUT=gpu-out bash benchmarks/gpu_checks.sh
# Writes its logs under $OUT (default gpu-out/): nvidia-smi.txt, pytest-gpu.log,
# cuda_step.jsonl (speeds), cuda_settings.jsonl (the estimate in every setting), demo-cuda.log and the demo run's report.md, metrics.jsonl and
# evaluation.json. Each stage runs even when an earlier one failed; the exit status is the
# number of stages that failed.
set -u
out=${OUT:-gpu-out}
py=${PYTHON:-python3}
mkdir -p "$out"
failed=0
stage() {  # stage NAME LOG CMD...: run CMD, its output to the terminal and to $out/LOG
    local name=$1 log=$2
    shift 2
    echo "== $name"
    local t0=$SECONDS
    "$@" 2>&1 | tee -a "$out/$log"
    local rc=${PIPESTATUS[0]}
    echo "== $name: rc $rc in $((SECONDS - t0)) s" | tee -a "$out/$log"
    [ "$rc" -eq 0 ] || failed=$((failed + 1))
}
export PYTHONUNBUFFERED=1
stage nvidia-smi nvidia-smi.txt nvidia-smi
# the gpu tests (they skip without CUDA: look for "passed" here, not "skipped")
stage pytest-gpu pytest-gpu.log "$py" -m pytest -q -p no:cacheprovider -m gpu -rs \
    tests/train/test_loop_gpu.py tests/memory/test_estimate.py tests/model/test_tft.py \
    tests/model/test_dropout.py tests/train/optimizer/test_adamw.py tests/quantize/test_quantize.py
# TFT-225 training steps: samples/s, allocator peak against the estimate
stage cuda-step cuda_step.jsonl "$py" benchmarks/cuda_step.py --batch-sizes 32 256 1024 \
    --precisions fp32 bf16
# the estimate's error in every setting: fp32/bf16/fp16 x recompute on/off x checkpointing
# off/on on TFT-225, and the smaller presets' other LSTM depths and widths; eight processes at
# once (memory only: each process's allocator peak is its own, the step times are shared)
stage cuda-settings cuda_settings.jsonl "$py" benchmarks/cuda_step.py --batch-sizes 32 256 1024 \
    --precisions fp32 bf16 fp16 --recompute on off --checkpointing off on --warmup 2 --steps 3 \
    --jobs 8
for p in demo fast; do
    stage "cuda-settings-$p" cuda_settings.jsonl "$py" benchmarks/cuda_step.py --preset "$p" \
        --batch-sizes 32 256 --precisions fp32 bf16 --recompute on off --warmup 2 --steps 3 \
        --jobs 8
done
# the demo end to end on the GPU (make demo's steps with --device cuda)
demo=$(mktemp -d)
stage demo-data demo-cuda.log "$py" -m foxhunt data demo --bars 20000 --seed 0 \
    --out "$demo/ES_FUT_demo.parquet"
stage demo-train demo-cuda.log "$py" -m foxhunt train --preset demo \
    --bars "$demo/ES_FUT_demo.parquet" --out "$demo" --device cuda
stage demo-evaluate demo-cuda.log "$py" -m foxhunt evaluate --model "$demo" \
    --bars "$demo/ES_FUT_demo.parquet" --device cuda
stage demo-latest demo-cuda.log "$py" -m foxhunt data demo --bars 600 --seed 1 \
    --start 2024-06-03 --out "$demo/ES_FUT_latest.parquet"
stage demo-predict demo-cuda.log "$py" -m foxhunt predict --model "$demo" \
    --bars "$demo/ES_FUT_latest.parquet" --out "$demo/forecast.parquet" --device cuda
for f in report.md metrics.jsonl evaluation.json; do cp "$demo/$f" "$out/" 2>/dev/null; done
rm -rf "$demo"
echo "== $failed stage(s) failed"
exit "$failed"

"""PyTorch DDP gradient buckets of a model, as a `workload.schedule` (no GPU, no torch).

    /usr/bin/python3 -m inasim.ddp resnet50 --compute-ms 292.2 [--bucket-cap-mb 25] [--scale S] [--out FILE]

Prints (or writes) the JSON of a scenario's `workload.schedule`
(docs/SCENARIO.md): one collective per DDP bucket, in the order DDP
allreduces them, each `ready_us` after the step's start. With `--out F.csv`
it writes the buckets as a collective-trace CSV instead (`bytes,ready_us`,
for `workload.schedule.file`; `compute_us` goes in the scenario).

- **Parameters.** The models' parameter tensors in definition order, as
  torchvision builds them: `resnet50` (161 tensors, 25,557,032 parameters,
  torchvision.models.resnet50, v1.5: stride on the 3x3 conv) and `vgg16`
  (32 tensors, 138,357,544 parameters, torchvision.models.vgg16). Each
  tensor carries the forward FLOPs of its layer for one 224 x 224 image
  (2 x multiply-adds; batch norm and biases 0).
- **Buckets.** DDP's steady state: after the first iteration the reducer
  rebuilds its buckets in the order gradients became ready, which is the
  reverse of definition order for these sequential models, and closes a
  bucket once its bytes reach the limit: `_DEFAULT_FIRST_BUCKET_BYTES`
  (1 MiB) for the first, `bucket_cap_mb` MiB for the rest
  (torch/csrc/distributed/c10d/reducer.cpp `compute_bucket_assignment_by_size`
  and `Reducer::rebuild_buckets`; torch/nn/parallel/distributed.py). fp32
  gradients: 4 bytes per parameter.
- **Ready times (assumptions, stated).** The step is `compute_ms` of
  forward then backward pass. The backward pass is `backward_fraction` of it
  (default 2/3: the backward pass costs about twice the forward's FLOPs,
  Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1), and
  its time is spent layer by layer, from the last layer back, in proportion
  to each layer's FLOPs. A gradient is ready when its layer's backward ends.
  A bucket is ready when its last gradient is. Real kernels do not run at
  one FLOP rate: this is a model of the profile, not a measurement.
- **Scale** (`--scale S`): every byte count and every time x S, one rule for
  both (a bucket's bytes rounded to whole 4-byte elements), for reduced runs.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from typing import Dict, List, Sequence

FIRST_BUCKET_BYTES = 1024 * 1024  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
BYTES_PER_PARAMETER = 4           # fp32 gradients


@dataclass(frozen=True)
class Tensor:
    name: str
    parameters: int
    forward_flops: int  # its layer's, for one image; 0 for batch norm and biases


def _resnet50() -> List[Tensor]:
    out: List[Tensor] = []

    def conv(name, cin, cout, k, hw_out):
        out.append(Tensor(name + ".weight", cout * cin * k * k, 2 * cin * cout * k * k * hw_out * hw_out))

    def bn(name, c):
        out.extend([Tensor(name + ".weight", c, 0), Tensor(name + ".bias", c, 0)])

    conv("conv1", 3, 64, 7, 112)
    bn("bn1", 64)
    cin = 64
    for layer, (blocks, mid, hw) in enumerate([(3, 64, 56), (4, 128, 28), (6, 256, 14), (3, 512, 7)], 1):
        for b in range(blocks):
            p = f"layer{layer}.{b}"
            hw_in = hw * 2 if b == 0 and layer > 1 else hw  # the 1x1 conv runs before the strided 3x3
            conv(p + ".conv1", cin, mid, 1, hw_in)
            bn(p + ".bn1", mid)
            conv(p + ".conv2", mid, mid, 3, hw)
            bn(p + ".bn2", mid)
            conv(p + ".conv3", mid, 4 * mid, 1, hw)
            bn(p + ".bn3", 4 * mid)
            if b == 0:
                conv(p + ".downsample.0", cin, 4 * mid, 1, hw)
                bn(p + ".downsample.1", 4 * mid)
            cin = 4 * mid
    out.append(Tensor("fc.weight", 2048 * 1000, 2 * 2048 * 1000))
    out.append(Tensor("fc.bias", 1000, 0))
    return out


def _vgg16() -> List[Tensor]:
    out: List[Tensor] = []
    cin, hw, index = 3, 224, 0
    for v in [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]:
        if v == "M":
            hw //= 2
            index += 1
            continue
        out.append(Tensor(f"features.{index}.weight", v * cin * 9, 2 * cin * v * 9 * hw * hw))
        out.append(Tensor(f"features.{index}.bias", v, 0))
        cin, index = v, index + 2  # conv, then ReLU
    for index, (a, b) in zip((0, 3, 6), ((25088, 4096), (4096, 4096), (4096, 1000))):
        out.append(Tensor(f"classifier.{index}.weight", a * b, 2 * a * b))
        out.append(Tensor(f"classifier.{index}.bias", b, 0))
    return out


MODELS = {"resnet50": _resnet50, "vgg16": _vgg16}


def parameters(model: str) -> List[Tensor]:
    """The model's parameter tensors in definition order."""
    if model not in MODELS:
        raise ValueError(f"model {model!r}: not one of {', '.join(sorted(MODELS))}")
    return MODELS[model]()


def buckets(tensors: Sequence[Tensor], bucket_cap_mb: float = 25,
            first_bucket_bytes: int = FIRST_BUCKET_BYTES) -> List[List[int]]:
    """DDP's rebuilt buckets: indices into `tensors` (definition order), in
    the order DDP allreduces them. Walks the gradients in ready order (last
    defined first) and closes a bucket once its bytes reach the current
    limit: the first bucket's, then `bucket_cap_mb` MiB."""
    if bucket_cap_mb <= 0 or first_bucket_bytes <= 0:
        raise ValueError("bucket limits must be > 0")
    limits = [first_bucket_bytes, int(bucket_cap_mb * 1024 * 1024)]
    out: List[List[int]] = []
    current: List[int] = []
    size = 0
    for i in reversed(range(len(tensors))):
        current.append(i)
        size += tensors[i].parameters * BYTES_PER_PARAMETER
        if size >= limits[min(len(out), 1)]:
            out.append(current)
            current, size = [], 0
    if current:
        out.append(current)
    return out


def ready_times(tensors: Sequence[Tensor], compute_s: float, backward_fraction: float = 2 / 3) -> List[float]:
    """Per tensor (definition order): when its gradient is ready, seconds
    after the step's start (see the module's assumptions)."""
    if not 0 < backward_fraction <= 1:
        raise ValueError("backward_fraction must be in (0, 1]")
    total = sum(t.forward_flops for t in tensors)
    forward_s = compute_s * (1 - backward_fraction)
    out = [0.0] * len(tensors)
    done = 0
    for i in reversed(range(len(tensors))):
        done += tensors[i].forward_flops
        out[i] = forward_s + compute_s * backward_fraction * done / total
    return out


def schedule(model: str, compute_ms: float, bucket_cap_mb: float = 25, scale: float = 1.0,
             backward_fraction: float = 2 / 3) -> Dict:
    """`workload.schedule` for one DDP step of `model`."""
    if compute_ms <= 0 or scale <= 0:
        raise ValueError("compute_ms and scale must be > 0")
    tensors = parameters(model)
    ready = ready_times(tensors, compute_ms * 1e-3, backward_fraction)
    collectives = []
    for bucket in buckets(tensors, bucket_cap_mb):
        elements = max(1, round(sum(tensors[i].parameters for i in bucket) * scale))
        collectives.append({"bytes": elements * BYTES_PER_PARAMETER,
                            "ready_us": round(max(ready[i] for i in bucket) * scale * 1e6, 6)})
    return {"compute_us": round(compute_ms * 1e3 * scale, 6), "after_us": 0, "collectives": collectives}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m inasim.ddp", description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help=f"one of {', '.join(sorted(MODELS))}")
    ap.add_argument("--compute-ms", type=float, required=True, help="forward + backward time of one step")
    ap.add_argument("--bucket-cap-mb", type=float, default=25, help="DDP's bucket_cap_mb (default 25)")
    ap.add_argument("--backward-fraction", type=float, default=2 / 3, help="share of the step in backward")
    ap.add_argument("--scale", type=float, default=1.0, help="every byte count and time x this")
    ap.add_argument("--out", help="write the JSON here, or the buckets as CSV if it ends in .csv (default: print)")
    args = ap.parse_args(argv)
    try:
        doc = schedule(args.model, args.compute_ms, args.bucket_cap_mb, args.scale, args.backward_fraction)
    except ValueError as e:
        print(f"inasim.ddp: {e}", file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=1) + "\n"
    if args.out and args.out.endswith(".csv"):
        text = (f"# inasim.ddp {args.model}: compute_us {doc['compute_us']}, after_us {doc['after_us']}\n"
                "bytes,ready_us\n" + "".join(f"{c['bytes']},{c['ready_us']}\n" for c in doc["collectives"]))
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

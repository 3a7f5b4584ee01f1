"""inasim.ddp: PyTorch DDP's gradient buckets of torchvision models as a
workload.schedule, without torch.

- The parameter lists are torchvision's: ResNet-50 has 161 tensors and
  25,557,032 parameters, VGG16 32 tensors and 138,357,544 (the counts
  torchvision reports); their forward FLOPs are the known 4.09 and 15.47
  G multiply-adds per 224 x 224 image.
- The bucket rule is DDP's (reducer.cpp compute_bucket_assignment_by_size):
  gradients in ready order, a bucket closed once it reaches 1 MiB (the
  first) or bucket_cap_mb; a worked example and ResNet-50's first bucket.
- The schedule's buckets are ready in order, the last at the step's end,
  the first after the forward pass; scaled, it runs on SwitchML with the
  first bucket's allreduce finished during the backward pass."""

import json
import subprocess
import sys

import pytest

from helpers import SOURCE_DIR, child_env, import_inasim
from test_pcap import BIN


@pytest.fixture(scope="module")
def ddp():
    import_inasim()
    import inasim.ddp

    return inasim.ddp


def test_parameter_lists_are_torchvisions(ddp):
    r50, vgg = ddp.parameters("resnet50"), ddp.parameters("vgg16")
    assert (len(r50), sum(t.parameters for t in r50)) == (161, 25_557_032)
    assert (len(vgg), sum(t.parameters for t in vgg)) == (32, 138_357_544)
    assert sum(t.forward_flops for t in r50) / 2 == pytest.approx(4.09e9, rel=0.01)
    assert sum(t.forward_flops for t in vgg) / 2 == pytest.approx(15.47e9, rel=0.01)
    assert (r50[0].name, r50[-1].name, vgg[-2].name) == ("conv1.weight", "fc.bias", "classifier.6.weight")


def test_buckets_close_at_the_limits_in_ready_order(ddp):
    T = ddp.Tensor
    tensors = [T("a", 100_000, 1), T("b", 200_000, 1), T("c", 150_000, 1), T("d", 10_000, 1)]
    # Ready order d, c, b, a: 40 KB, 640 KB, then 1,440 KB >= 1 MiB closes [d, c, b]; a alone.
    assert ddp.buckets(tensors, bucket_cap_mb=1) == [[3, 2, 1], [0]]
    # A 64 KiB first limit closes [d, c] at 640 KB; then b, a: 1,200 KB < 2 MiB stays open.
    assert ddp.buckets(tensors, bucket_cap_mb=2, first_bucket_bytes=64 * 1024) == [[3, 2], [1, 0]]
    r50 = ddp.parameters("resnet50")
    b = ddp.buckets(r50)
    assert [r50[i].name for i in b[0]] == ["fc.bias", "fc.weight"]  # 8.2 MB >= 1 MiB at once
    assert sorted(i for bucket in b for i in bucket) == list(range(len(r50)))
    for bucket in b[1:-1]:
        size = sum(r50[i].parameters for i in bucket) * 4
        assert size >= 25 * 2**20 and size - r50[bucket[-1]].parameters * 4 < 25 * 2**20


def test_schedule_ready_times(ddp):
    s = ddp.schedule("resnet50", compute_ms=300)
    ready = [c["ready_us"] for c in s["collectives"]]
    assert s["compute_us"] == 300_000 and ready == sorted(ready) and ready[-1] == 300_000
    assert ready[0] > 100_000  # after the forward pass (1/3 of the step)
    assert sum(c["bytes"] for c in s["collectives"]) == 4 * 25_557_032
    small = ddp.schedule("resnet50", compute_ms=300, scale=0.01)
    assert small["compute_us"] == 3000 and all(c["bytes"] % 4 == 0 for c in small["collectives"])
    assert [c["ready_us"] for c in small["collectives"]] == pytest.approx([r * 0.01 for r in ready])


def test_cli_and_a_scaled_step_on_switchml(tmp_path):
    env = child_env()
    p = subprocess.run([sys.executable, "-m", "inasim.ddp", "resnet50", "--compute-ms", "292.2", "--scale", "0.002",
                        "--out", str(tmp_path / "s.json")], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    bad = subprocess.run([sys.executable, "-m", "inasim.ddp", "resnet51", "--compute-ms", "1"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "resnet51" in bad.stderr
    schedule = json.loads((tmp_path / "s.json").read_text())
    out = tmp_path / "out"
    p = subprocess.run([BIN, "run", str(SOURCE_DIR / "scenarios/switchml/fig9-pool-small.json"), "--out", str(out),
                        "--set", "workload.iterations=2", "--set", "workload.schedule=" + json.dumps(schedule)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    import pandas as pd

    hosts = pd.read_csv(out / "hosts.csv")
    iters = pd.read_csv(out / "iterations.csv")
    first = hosts[hosts.collective == 0]
    assert (first.end_s < iters[iters.iteration == 0].compute_end_s.iloc[0]).all(), "bucket 0 overlaps backward"
    assert json.loads((out / "results.json").read_text())["correct"]


def test_csv_out_is_the_same_buckets_as_a_trace_file(tmp_path, ddp):
    """--out F.csv: the buckets as a collective-trace CSV that
    workload.schedule.file reads back to the JSON's collectives."""
    env = child_env()
    p = subprocess.run([sys.executable, "-m", "inasim.ddp", "vgg16", "--compute-ms", "400", "--scale", "0.001",
                        "--out", str(tmp_path / "b.csv")], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    want = ddp.schedule("vgg16", 400, scale=0.001)
    lines = (tmp_path / "b.csv").read_text().splitlines()
    assert lines[0].startswith("# inasim.ddp vgg16") and lines[1] == "bytes,ready_us"
    assert [tuple(map(float, x.split(","))) for x in lines[2:]] == [(c["bytes"], c["ready_us"])
                                                                   for c in want["collectives"]]
    r = subprocess.run([BIN, "validate", str(SOURCE_DIR / "scenarios/switchml/fig9-pool-small.json"), "--set",
                        "workload.schedule=" + json.dumps({"compute_us": want["compute_us"],
                                                           "file": str(tmp_path / "b.csv")})],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr

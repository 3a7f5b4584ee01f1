"""DNN models as data (data/models/dnn-models.csv, src/ina/dnn-models.h):
PANAMA's cluster draws from the built-in table, and a scenario's
`workload.panama.cluster.models_file` adds a model (or replaces one by name)
without a rebuild. Each job's gradient bytes and compute time come from the
model's row (x the cluster's scale); bad files exit 2 naming the file, the
line and the field, and write nothing."""

import json
import subprocess

from helpers import SOURCE_DIR, child_env
from test_pcap import BIN

CLUSTER = "scenarios/panama/cluster-small.json"
HEADER = "name,parameters,batch,gpu,images_per_s,source\n"


def run(tmp_path, sets, name="out"):
    out = tmp_path / name
    args = [BIN, "run", str(SOURCE_DIR / CLUSTER), "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    return subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=300), out


def test_a_users_model_is_drawn_with_its_own_numbers(tmp_path):
    f = tmp_path / "models.csv"
    # 10,000,000 parameters, batch 32 at 1,000 images/s: 40 MB and 32 ms per iteration.
    f.write_text("# a model of mine\n" + HEADER + "mine,10000000,32,H100,1000,my measurement\n")
    p, out = run(tmp_path, [f"workload.panama.cluster.models_file={json.dumps(str(f))}",
                            'workload.panama.cluster.models=["mine","vgg16"]'])
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "results.json").read_text())["correct"]
    import pandas as pd

    jobs = pd.read_csv(out / "panama_cluster.csv")
    scale = 0.0005
    assert set(jobs.model) == {"mine", "vgg16"}
    want = {"mine": (10_000_000, 32 / 1000), "vgg16": (138_357_544, 64 / 154.0)}
    for j in jobs.itertuples():
        parameters, compute_s = want[j.model]
        assert j.bytes == round(parameters * 4 * scale / 4) * 4  # whole fp32 values
        assert abs(j.compute_s - compute_s * scale) < 1e-9


def test_without_a_file_every_builtin_model(tmp_path):
    p, out = run(tmp_path, ["workload.panama.cluster.jobs=3"])
    assert p.returncode == 0, p.stderr
    r = json.loads((out / "results.json").read_text())
    assert r["scenario"]["workload"]["panama"]["cluster"]["models"] == [
        "vgg16", "alexnet", "resnet152", "resnet50", "inceptionv3"]


def test_bad_models_files_name_the_line_and_field(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text(HEADER + "ok,100,8,P100,10,s\nbad,100,8,P100,-3,s\n")
    p, out = run(tmp_path, [f"workload.panama.cluster.models_file={json.dumps(str(f))}"])
    assert p.returncode == 2, p.stderr
    assert "workload.panama.cluster.models_file" in p.stderr
    assert f"{f}:3: images_per_s: \"-3\" is not a number > 0" in p.stderr, p.stderr
    assert not out.exists()
    p, _ = run(tmp_path, ['workload.panama.cluster.models=["mine"]'], name="b")
    assert p.returncode == 2 and "workload.panama.cluster.models[0]" in p.stderr and "vgg16" in p.stderr, p.stderr
    p, _ = run(tmp_path, ['workload.panama.cluster.models_file="/dev/zero"'], name="c")
    assert p.returncode == 2 and "not a regular file" in p.stderr, p.stderr

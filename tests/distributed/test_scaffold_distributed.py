"""``mindport scaffold --distributed``: a data-parallel train.py and its msrun launch script (the writer migrate
uses). The rendered job runs under msrun with 2 CPU workers, and rank 0's checkpoint must equal one process that
takes, at every step, the mean of the gradients of the two workers' batches (the shards the rendered pipeline gives
each rank) with the same optimizer, for the functional loop and the Model API: the workers shard the data
and average the gradients (about 50 s)."""
from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mindport.proofs.distributed import _free_port, _venv_env

HERE = Path(__file__).parent
BLOBS = HERE.parent / "templates" / "fixtures" / "blobs.py"


@pytest.mark.slow
def test_scaffold_distributed_trains_data_parallel_under_msrun(tmp_path):
    import mindspore as ms
    from mindspore import nn

    project = tmp_path / "proj"
    (project / "models").mkdir(parents=True)
    shutil.copy(HERE / "scaffold_model" / "linear.py", project / "models" / "linear.py")
    shutil.copy(BLOBS, project / "models" / "blobs.py")
    sys.path.insert(0, str(project / "models"))
    try:
        start = importlib.import_module("linear").Classifier()
    finally:
        sys.path.remove(str(project / "models"))
    ms.save_checkpoint(start, str(tmp_path / "start.ckpt"))

    scripts = project / "scripts"
    done = subprocess.run(
        [sys.executable, "-m", "mindport.cli", "scaffold", "--model", "models/linear.py:Classifier",
         "--ctor", "num_classes=4", "--input", "4x16:float32", "--optimizer", "sgd", "--checkpoint",
         str(tmp_path / "start.ckpt"), "--dataset", "models/blobs.py:Blobs",
         "--dataset-ctor", "split=split, num_samples=24", "-o", str(scripts), "--distributed"],
        cwd=project, env=_venv_env(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    launch = scripts / "launch_train.sh"
    assert f"wrote {launch}" in done.stdout and "msrun --worker_num" in launch.read_text()

    trained = {}
    for api in ("functional", "model"):  # the value_and_grad loop and the Model API
        env = {**_venv_env(), "NPROC": "2", "MASTER_PORT": str(_free_port())}
        job = subprocess.run(["sh", str(launch), "--steps", "3", "--lr", "0.1", "--api", api, "--ckpt-dir", api],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
        logs = "".join(p.read_text(errors="replace")[-2000:] for p in sorted(scripts.glob("msrun_log/worker_*.log")))
        assert job.returncode == 0, job.stdout[-2000:] + job.stderr[-2000:] + logs
        written = sorted(p.name for p in (scripts / api).glob("*.ckpt"))
        assert written == ["classifier-1_3.ckpt"], (api, written)  # rank 0 only
        trained[api] = ms.load_checkpoint(str(scripts / api / "classifier-1_3.ckpt"))

    # one process: each step the mean of both shards' gradients, the rendered optimizer (SGD, momentum 0.9)
    sys.path[:0] = [str(scripts)]
    try:
        pipeline = importlib.import_module("data_pipeline")
        shards = [list(pipeline.build_dataset("train", 4, 4, steps=3, num_shards=2, shard_id=rank)
                       .create_tuple_iterator()) for rank in range(2)]
        train = importlib.import_module("train")
        net = train.build_network()
        ms.load_param_into_net(net, ms.load_checkpoint(str(tmp_path / "start.ckpt")))
        optimizer = train.build_optimizer(net, 0.1)
    finally:
        for name in ("data_pipeline", "train", "linear", "blobs"):
            sys.modules.pop(name, None)
        del sys.path[:1]
    assert all(len(s) == 3 for s in shards)
    assert not np.array_equal(shards[0][0][0].asnumpy(), shards[1][0][0].asnumpy())  # the ranks' data differ
    loss_fn = nn.CrossEntropyLoss()
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, optimizer.parameters)
    net.set_train(True)
    for step in range(3):
        grads = [grad_fn(*shards[rank][step])[1] for rank in range(2)]
        optimizer(tuple((a + b) / 2 for a, b in zip(*grads)))
    for api, weights in trained.items():
        for param in net.trainable_params():
            np.testing.assert_allclose(weights[param.name].asnumpy(), param.asnumpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{api}: {param.name}")
        assert not np.allclose(weights["hidden.weight"].asnumpy(), start.hidden.weight.asnumpy())

"""A torch DDP training script of our own (tests/distributed/ddp_project/train.py) under torchrun (gloo, 2 workers)
against its conversion by ``mindport migrate``, run with the msrun launch script migrate writes (2 CPU workers): each rank's 20 per-step losses match
within 1e-4 relative, and the final weights rank 0 saves match. Real processes, real launchers (about 40 s)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mindport.proofs.distributed import _free_port, _venv_env, run_job

PROJECT = Path(__file__).parent / "ddp_project"


@pytest.mark.slow
def test_converted_ddp_script_trains_identically_under_msrun(tmp_path):
    torch_dir, ms_dir = tmp_path / "torch", tmp_path / "converted"
    shutil.copytree(PROJECT, torch_dir)
    # migrate converts the project and writes the msrun launch script of its torchrun entry script; the MindSpore
    # side is run with that script, as a user would
    migrate = subprocess.run([sys.executable, "-m", "mindport.cli", "migrate", str(PROJECT), "-o", str(ms_dir),
                              "--no-models"],
                             env=_venv_env(), capture_output=True, text=True, check=False)
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    assert "mp_distributed.DistributedDataParallel" in (ms_dir / "train.py").read_text()
    launch = ms_dir / "mindport_scripts" / "launch_train.sh"
    assert "msrun --worker_num" in launch.read_text() and "launch_train.sh" in migrate.stdout
    report = json.loads((ms_dir / "mindport-report.json").read_text())
    assert report["launch"] == [str(launch)]
    run_job("torch", torch_dir / "train.py", [], torch_dir)
    env = {**_venv_env(), "NPROC": "2", "MASTER_PORT": str(_free_port())}
    done = subprocess.run(["sh", str(launch)], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for rank in range(2):
        ours = json.loads((ms_dir / f"losses-rank{rank}.json").read_text())
        theirs = json.loads((torch_dir / f"losses-rank{rank}.json").read_text())
        assert (ours["rank"], ours["world"], ours["local_rank"]) == (theirs["rank"], theirs["world"], rank)
        assert len(ours["losses"]) == len(theirs["losses"]) == 20
        np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-4)
        assert theirs["losses"][-1] < theirs["losses"][0] / 2  # it trains: the comparison is not of constants
    import mindspore as ms
    import torch

    torch_state = torch.load(torch_dir / "net.pt", weights_only=True)
    ms_state = ms.load_checkpoint(str(ms_dir / "net.pt.ckpt"))  # ms.save_checkpoint appends .ckpt
    assert set(torch_state) == set(ms_state)
    for name, value in torch_state.items():
        np.testing.assert_allclose(ms_state[name].asnumpy(), value.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)

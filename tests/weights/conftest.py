import os
import sys
from pathlib import Path

# Two xdist workers share two cores: one compute thread per framework per worker avoids oversubscription.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    import torch

    torch.set_num_threads(1)
    import mindspore as ms

    ms.set_context(runtime_num_threads=1)

"""Real scripts put torch beside other modules in one import line, and build batches with torch.from_numpy inside
the training loop: the conversion keeps the other modules and runs."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from mindport import convert_source


def test_an_import_line_with_torch_and_other_modules_keeps_the_others():
    code = convert_source("import torch, numpy as np\nimport os, torch.nn as nn\n\nx = torch.ones(2)\n"
                          "y = np.zeros(2) + len(os.sep)\n").code
    assert "import numpy as np" in code and "import os" in code and "torch" not in code
    namespace: dict = {}
    exec(compile(code, "converted", "exec"), namespace)
    assert namespace["y"].shape == (2,)


def test_a_loop_that_builds_its_batch_with_from_numpy_converts_and_trains(tmp_path):
    source = textwrap.dedent("""\
        import torch, numpy as np
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        inputs = np.random.default_rng(0).standard_normal((20, 4, 3)).astype(np.float32)
        losses = []
        for step in range(20):
            x = torch.from_numpy(inputs[step])
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(float(loss))
        print(losses[0], losses[-1])
    """)
    result = convert_source(source)
    assert "from_numpy.set_train" not in result.code and "value_and_grad" in result.code, result.code
    script = tmp_path / "train.py"
    script.write_text(result.code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    first, last = map(float, run.stdout.split()[-2:])
    assert last < first  # it trains

"""Session trainspeed15 (issue 27): speed of converted training loops, by family (benchmarks/training/speed.py has
the timings; no test here is timed), and the learn check of the training corpus. Real torch, real MindSpore."""
from __future__ import annotations

from test_fresh_causes import _convert

# (trainspeed15's synchronous launch for every runtime module was reverted: MindSpore 2.10's launch_blocking
# breaks floor division on the CPU, 'KernelMod Init Failed: FloorDiv', tests/mappings/test_tensor_method_forms)


SEEDED_LOADER = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
g = torch.Generator()
g.manual_seed(2025)
data = TensorDataset(torch.arange(12.0).view(12, 1), torch.arange(12.0))
loader = DataLoader(data, batch_size=4, shuffle=True, generator=g)
order = []
for _ in range(2):
    for x, y in loader:
        order += [int(v) for v in y.tolist()]
print(order)
'''


def test_the_tracker_gives_a_loader_with_its_own_generator_the_same_order_on_both_sides(tmp_path):
    """joyful/vanilla_kd (seeded torch.Generator for its shuffled DataLoaders): run as a deterministic entry, its
    first losses differed by 3e-3 from the same weights: torch's RandomSampler draws torch.randperm(n, generator=g),
    which the tracker shares, while mindport's sampler drew the converted generator's own stream. Both now draw the
    tracker's stream."""
    from test_fresh_causes import _run_boot

    t = _run_boot(tmp_path, "torch", "track", SEEDED_LOADER)
    m = _run_boot(tmp_path, "mindspore", "track", _convert(SEEDED_LOADER))
    assert t == m and sorted(eval(t)[:12]) == list(range(12)) and eval(t)[:12] != list(range(12)), (t, m)

"""``.backward()`` on a value a third-party library made (trainfresh18's open finding): the converter cannot tell a
torch tensor it returns from the library's own object, so the call is left as written, and that is said (MP105).
Left silent before: a torch loss computed by a library ran into MindSpore's Tensor, which has no ``backward()``,
with nothing in the report."""
from __future__ import annotations

from mindport import convert_source

# a loss function imported from a module that is not the project's (a package the converter does not see), called
# in a nested loop the general backward region would take: the value is "foreign"
FOREIGN_LOSS = '''
import torch
import torch.nn as nn
from lossbox import recon_loss

model = nn.Linear(4, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x_all = torch.linspace(0.05, 0.95, 32).reshape(8, 4)
for epoch in range(3):
    overall = 0.0
    for i in range(2):
        x = x_all[i * 4:(i + 1) * 4]
        optimizer.zero_grad()
        loss = recon_loss(x, model(x))
        overall += loss.item()
        loss.backward()
        optimizer.step()
    print("step", overall)
'''


def test_backward_of_a_third_party_value_is_kept_and_flagged():
    result = convert_source(FOREIGN_LOSS, "script.py")
    found = [d for d in result.diagnostics if d.code == "MP105"]
    assert len(found) == 1, [d.format() for d in result.diagnostics]
    assert "third-party" in found[0].message and found[0].line == 16
    kept = [line for line in result.code.splitlines() if "loss.backward()" in line]
    assert len(kept) == 1 and kept[0].startswith("        loss.backward()  # mindport: MP105")


def test_backward_of_a_loss_made_by_torch_is_not_flagged():
    source = FOREIGN_LOSS.replace("from lossbox import recon_loss\n", "").replace(
        "recon_loss(x, model(x))", "torch.nn.functional.mse_loss(model(x), x)")
    result = convert_source(source, "script.py")
    assert not [d for d in result.diagnostics if d.code == "MP105"]
    assert "loss.backward()" not in result.code

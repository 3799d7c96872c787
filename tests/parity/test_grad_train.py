"""Gradient parity (--grad) and training parity (--train-steps): a bug in the backward pass that the forward pass
cannot see, and three architectures trained 20 steps on both sides with losses within 1e-4 relative."""
from __future__ import annotations

import pytest

from parity_helpers import MODELS, convert_model
from mindport.validators.parity.compare import validate, write_reports


def test_a_gradient_bug_only_grad_catches(tmp_path):
    """The port cuts the gradient below fc2 (stop_gradient): every forward value is identical."""
    ms_file = convert_model("mlp", tmp_path)
    code = ms_file.read_text()
    old = "x = self.act(self.fc2(x))"
    assert old in code
    ms_file.write_text("from mindspore import ops\n" + code.replace(old, "x = self.act(ops.stop_gradient(self.fc2(x)))"))
    report = validate(f"{MODELS}/mlp.py:MLP", f"{ms_file}:MLP", inputs=["5x6:float32"], grad=True)
    # the forward comparison sees nothing
    assert all(o.allclose for o in report.outputs) and report.first_divergent is None
    assert {lr.status for lr in report.layers} == {"match"} and report.graph.status == "ok"
    # the gradients do
    g = report.grad
    assert not g.ok and not report.ok
    assert [p.name for p in g.params][:2] == ["fc3.weight", "fc3.bias"]  # backward order: nearest the output first
    assert g.params[0].status == g.params[1].status == "match"
    assert g.first_divergent.name in ("fc2.weight", "fc2.bias") and g.first_divergent.layer == "fc2"
    assert g.first_divergent.grade == "error" and g.first_divergent.cosine == 0.0
    assert "stop_gradient(self.fc2(x))" in g.layer["ms_site"] or "stop_gradient" in _line(g.layer["ms_site"])
    assert g.layer["torch_site"].startswith(str(MODELS / "mlp.py"))
    assert any(d.code == "MP405" and d.file == str(ms_file) for d in report.diagnostics)


def _line(site: str) -> str:
    path, _, line = site.rpartition(":")
    return open(path).read().splitlines()[int(line) - 1]


TRAINED = [
    # model, class, input, loss, optimizer, lr, optimizer arguments
    ("train_cnn", "SmallCNN", ["4x3x16x16:float32"], "cross_entropy", "sgd", 0.05, {"momentum": 0.9}),
    ("train_rnn", "SeqGRU", ["4x7x6:float32"], "mse", "adamw", 0.01, {"weight_decay": 0.05}),
    ("train_transformer", "TinyEncoder", ["4x10:int64:0:40"], "cross_entropy", "adamw", 0.005, {}),
]


@pytest.mark.slow
@pytest.mark.parametrize("model,cls,inputs,loss,optimizer,lr,args", TRAINED, ids=[t[0] for t in TRAINED])
def test_training_parity_20_steps(tmp_path, model, cls, inputs, loss, optimizer, lr, args):
    ms_file = convert_model(model, tmp_path)
    report = validate(f"{MODELS}/{model}.py:{cls}", f"{ms_file}:{cls}", inputs=inputs, grad=True, train_steps=20,
                      optimizer=optimizer, lr=lr, optimizer_args=args, loss=loss, graph_mode=False)
    t = report.train
    assert t.ok, (t.losses, t.note, [(w.name, w.max_rel) for w in t.weights if w.diverged])
    assert len(t.losses["torch"]) == len(t.losses["mindspore"]) == 20
    assert t.max_rel_diff <= 1e-4
    assert t.weights and all(w.status in ("match", "drift") for w in t.weights)
    drifted = [w for w in t.weights if w.status == "drift"]
    assert all(w.grade != "error" and w.cosine > 0.99 for w in drifted)
    # it trained: the weights moved far more than the two frameworks differ
    moved = [w for w in t.weights if w.update and w.update > 1e3 * max(w.max_abs, 1e-9) and w.status == "match"]
    assert len(moved) >= len(t.weights) // 2, [(w.name, w.update, w.max_abs) for w in t.weights]
    assert report.grad.ok and report.grad.sign_similarity > 0.999
    assert report.ok
    html = write_reports(report, tmp_path / "r.html")[0].read_text()
    assert html.count("<svg") == 2 and "training loss, torch and MindSpore" in html


def test_a_training_only_bug_shows_in_the_loss_curve(tmp_path):
    """MindSpore's BatchNorm told to normalise with its running statistics in training too: inference is identical,
    training is not."""
    edit = ("bn1", r"momentum=0\.9", "momentum=0.9, use_batch_statistics=False")
    ms_file = convert_model("train_cnn", tmp_path, edits=[edit])
    report = validate(f"{MODELS}/train_cnn.py:SmallCNN", f"{ms_file}:SmallCNN", inputs=["4x3x16x16:float32"],
                      train_steps=3, loss="cross_entropy", graph_mode=False)
    assert all(o.allclose for o in report.outputs)
    t = report.train
    assert not t.ok and not report.ok and t.first_divergent_step == 0
    assert t.optimizer["torch"] == "torch.optim.SGD" and t.optimizer["mindspore"] == "mindport.runtime.optim.SGD"
    assert t.loss == {"torch": "torch.nn.CrossEntropyLoss", "mindspore": "mindport.runtime.losses.CrossEntropyLoss"}
    assert any(d.code == "MP406" and "step 0" in d.message for d in report.diagnostics)

"""Training code: the torch loop (zero_grad / forward / loss / backward / step) becomes MindSpore's functional step
(``TrainingLoopRule``; the data pipeline is ``data_pipeline.py``'s).

It rewrites a ``for`` loop whose own body holds ``<loss>.backward()`` and ``<opt>.step()``::

    def forward_fn(x, y):                    # the assignments right before backward, autocast blocks flattened
        out = model(x)
        loss = criterion(out, y)
        return loss, out                     # loss first (differentiated), then what the loop reads later
    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    for x, y in loader:
        (loss, out), grads = grad_fn(x, y)
        grads = ops.clip_by_global_norm(grads, 1.0)      # clip_grad_norm_(...)
        optimizer(grads)                                 # optimizer.step(); zero_grad() disappears

The definitions go before the outermost loop of the nest. Shapes handled: plain; scheduler ``.step()`` (kept: the
``experimental.optim`` schedulers have it); clipping by norm/value; AMP (``autocast`` blocks flattened, the network
converted once with ``amp.auto_mixed_precision`` when autocast is enabled (CUDA's autocast,
``torch.cuda.amp.autocast()`` or ``torch.autocast("cuda")``, only where MindSpore computes on a GPU: torch's casts CUDA
ops only, so a run without CUDA is float32), ``GradScaler.scale/unscale_/step/update``
-> ``DynamicLossScaler.scale/unscale/all_finite/adjust``); gradient accumulation (``step()`` inside an ``if``: grads
are summed into ``accum_grads`` and ``zero_grad()`` resets it). A loop with no ``zero_grad()`` at all sums them the same
way and never resets (torch adds every ``backward()`` into ``.grad``); a later such loop on the same optimizer keeps
adding to the same sum; nested in another loop, which might reset them, or after a loop that resets them (torch's
``.grad`` holds that loop's last gradients, kept by the general region below), it goes to the general region.

Every other ``.backward()`` goes to the general backward region (``training_region.py``), wherever it stands: a
loop over epochs, ``range`` or a DataLoader, a ``while``, a ``train(epoch)`` or ``train_step`` function, a closure
for LBFGS, a GAN step with two optimizers, several backward calls (accumulation, ``retain_graph=True``). What
computes the differentiated tensor becomes ``forward_fn``, differentiated where the last of its statements stood
(``mindport.runtime.training.value_and_grad``: tensors made with ``requires_grad=True`` by position, the parameters
of the optimizers and models it reaches); statements that do not feed the loss (prints, metrics, ``.item()``) keep
their order, and those reading its results move right after it; state carried across steps is its argument and
comes back out. torch's ``.grad`` is kept on the tensors (``mindport.runtime.training``): ``loss.backward()`` ->
``mp_train.backward(grads)`` adds into it, ``opt.step()`` -> ``opt(mp_train.grads_of(opt))``, ``opt.step(closure)``
-> ``mp_train.step(opt, closure)``, ``zero_grad()`` -> ``mp_train.zero_grad(...)``, ``clip_grad_norm_``/
``clip_grad_value_`` act on ``.grad``; manual updates (``w -= lr * w.grad`` on a leaf, ``p.data -= ...``) are in
place; ``GradScaler``'s scale/unscale_/step/update and ``autocast`` run in full precision, as torch runs them without
CUDA. ``backward(inputs=[...])`` adds only into those tensors' ``.grad``. A random draw inline in a statement that
two backward calls' forwards both compute (a GAN's ``fake = g(torch.randn(...))``) becomes a statement of its own
before them, drawn once as torch draws it; a backward called alone on a loss expression
(``criterion(model(x), y).backward()``) gets that loss as a statement of its own; a ``with torch.no_grad():`` block
(weights set in place) is never part of a forward.

``torch.autograd.grad(outputs, inputs, create_graph=True)`` (a gradient penalty, a Hessian-vector product, a
double-backprop regulariser): the statements before it that compute ``outputs`` from ``inputs`` become a function of
the inputs, defined where the call stands, and the call ``mp_train.grad_graph(fn, inputs, ...)`` (``mindspore.vjp``);
inside a ``forward_fn`` the later backward differentiates through it (PyNative). Inputs ``d.values()`` (MAML's inner
step over ``dict(model.named_parameters())`` fast weights): the function takes the dict and
``mp_train.grad_graph_values(fn, d)`` differentiates it over the values. Other gradients with respect to a model's
parameters, several outputs, and ``.backward(create_graph=True)`` get MP105.

``opt.state_dict()`` / ``opt.load_state_dict(sd)`` on an optimizer (of the file, or a receiver named like one:
``self.optimizer``, ``scheduler.optimizer``) -> ``mp_optim.state_dict(opt)`` / ``mp_optim.load_state_dict(opt, sd)``:
torch's ``{'state', 'param_groups'}`` (a MindSpore optimizer's own is its Cell's parameter table); any other receiver
answers its own method at run time.

``opt.param_groups[i]['lr']`` read (not assigned) on an optimizer of the file is ``float(...)``: a Python float in
torch, a Parameter in ``mindspore.experimental.optim`` (``f"{lr:.2e}"`` raised, ``lr == 0.1`` was a tensor).
``sched.get_last_lr()`` on a scheduler of the file (or a receiver named like one) is ``mp_optim.get_last_lr(sched)``:
torch's list of Python floats, where MindSpore's schedulers give 0-d Tensors.

Training mode: torch builds every Module in training mode, MindSpore's Cells start in inference mode. In a file that
never calls ``train()``/``eval()``, a model the step calls gets ``model.set_train(True)`` once before the loop, and
a parameter of the enclosing function the step calls (a generator handed into ``train_wgan(dataloader, generator,
critic)`` from another file, whose parameters the file never reads)
``mindport.runtime.training.train_mode(name)``: set_train for a Cell, nothing for a function; so does, in a method
of a class, an attribute ``self.<name>`` (not a method of the class) the step calls directly or through the class's
own methods (a Trainer handed its generator and critic by another file, sampling fakes in ``self.sample_generator``).
"""
from __future__ import annotations

import builtins
from collections import Counter

import libcst as cst

from mindport.mappings import bundled_registry
from mindport.migrator.imports import runtime_alias
from mindport.migrator.native_facts import all_nodes
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.rules.training_region import (RANDOM_DRAWS, Plan, Site, Unfit, _discarded_model_call,
                                                      _attribute_stores_only, _is_gradient_api, _stored_paths,
                                                      reads_before_writes, plan_block,
                                                      reads_writes, split_parallel)
from mindport.migrator.rules.training_loop_analysis import (
    _bound_only_elsewhere,
    _contains,
    _expr_call,
    _handle_subtree,
    _Names,
    _names,
    _own_calls,
    _receiver_name,
    _sets_train_mode,
)
from mindport.migrator.scopes import dotted_name, operand_kind, receiver_kind
from mindport.migrator.syntax import code_of, method_call, target_names
from mindport.migrator.table import CallBindError, bind_arguments
from mindport.migrator.walk import parse_expression, parse_statement, read, transform, walk


def _clip_names() -> dict[str, str]:
    """Every torch name of the two clipping entries (their aliases in the tables too: ``clip_grad.clip_grad_norm_``,
    torch's deprecated ``clip_grad_norm``) -> ``norm`` or ``value``."""
    registry = bundled_registry()
    return {name: kind for kind, torch in (("norm", "torch.nn.utils.clip_grad_norm_"),
                                           ("value", "torch.nn.utils.clip_grad_value_"))
            for name in (torch, *registry.lookup(torch).aliases)}


_CLIP = _clip_names()
_AUTOCAST = {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"}
_MP105_HINT = ("write the step by hand: forward_fn(x, y) returning (loss, aux), grad_fn = ms.value_and_grad(forward_fn, "
               "None, opt.parameters, has_aux=True), (loss, aux), grads = grad_fn(x, y), opt(grads)")



def _stored_attribute_read(stmts, name: str) -> bool:
    """Whether the statements read an attribute of ``name`` as a value (``model.loss``), not a method they call
    (``model.loss_fn(x)``)."""
    attributes, called = [], set()

    class _Reads(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            called.add(id(node.func))

        def visit_Attribute(self, node) -> None:
            if isinstance(node.value, cst.Name) and node.value.value == name:
                attributes.append(node)

    for stmt in stmts:
        walk(stmt, _Reads())
    return any(id(node) not in called for node in attributes)


class _Unfit(Exception):
    """The loop holds .backward() but is not one of the recognised shapes; the message says why."""


class TrainingLoopRule(Rule):
    """The torch training step (zero_grad/forward/loss/backward/step) -> ``value_and_grad`` + ``opt(grads)`` in a
    ``for`` loop of that shape, and everywhere else the general backward region with torch's ``.grad`` kept by
    ``mindport.runtime.training``."""

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                def finetune(model, x, y):
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    model.eval()
                    for step in range(3):
                        optimizer.zero_grad()
                        loss = nn.functional.mse_loss(model(x), y)
                        loss.backward()
                        optimizer.step()
            """,
            after="""
                import mindspore as ms
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import nn_functional as mp_F


                def finetune(model, x, y):
                    optimizer = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    model.set_train(False)
                    def forward_fn():
                        loss = mp_F.mse_loss(model(x), y)
                        return loss
                    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
                    for step in range(3):
                        loss, grads = grad_fn()
                        optimizer(grads)
            """,
            note="A file that calls eval() before the loop and never train(): torch trains the model in inference mode (Dropout off), so no set_train(True) goes before the loop; the Cell stays as eval() left it.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn
                from apex import amp


                def train(model, loader):
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
                    for x, y in loader:
                        loss = nn.functional.mse_loss(model(x), y)
                        optimizer.zero_grad()
                        with amp.scale_loss(loss, optimizer) as scaled_loss:
                            scaled_loss.backward()
                        optimizer.step()
            """,
            after="""
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import ecosystem as mp_ecosystem
                from mindport.runtime import training as mp_train


                def train(model, loader):
                    optimizer = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    model, optimizer = mp_ecosystem.amp_initialize(models=model, optimizers=optimizer, opt_level="O1")
                    model.set_train(True)
                    for x, y in loader:
                        def forward_fn():
                            loss = mp_F.mse_loss(model(x), y)
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, model))
                        loss, grads = grad_fn()
                        mp_train.zero_grad(optimizer)
                        with mp_ecosystem.amp_scale_loss(loss=loss, optimizers=optimizer) as scaled_loss:
                            mp_train.backward(grads)
                        optimizer(mp_train.grads_of(optimizer))
            """,
            note="apex AMP (mapped in packages.toml: initialize returns its arguments, scale_loss gives the loss itself): the with's target is read as the loss it wraps, so scaled_loss.backward() is the loss's own backward, differentiated where the loss is computed (it was 'not computed in this block', MP105, the loop left to torch).",
        ),
        Example(
            before="""
                import torch


                def dampen(optimizer, factors):
                    for group, factor in zip(optimizer.param_groups, factors):
                        group['lr'] *= factor
                    return [group['lr'] for group in optimizer.param_groups]
            """,
            after="""
                from mindport.runtime import optim as mp_optim


                def dampen(optimizer, factors):
                    for group, factor in zip(optimizer.param_groups, factors):
                        mp_optim.set_group(group, 'lr', group['lr'] * (factor))
                    return [float(group['lr']) for group in optimizer.param_groups]
            """,
            note="A warmup library's dampening: groups bound by a loop over zip(opt.param_groups, ...) (or enumerate, or a comprehension) are written in place (a MindSpore group's lr is the Parameter its optimizer and scheduler read; *= had rebound it, and the optimizer kept the undampened rate), and their lr is read as torch's Python float, not an alias of the Parameter that later writes would move.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                def fit(make_model, x, y):
                    model = make_model()
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    model.train()
                    for step in range(3):
                        optimizer.zero_grad()
                        loss = nn.functional.mse_loss(model(x), y)
                        loss.backward()
                        optimizer.step()
                    model = make_model()
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    for step in range(3):
                        optimizer.zero_grad()
                        loss = nn.functional.mse_loss(model(x), y)
                        loss.backward()
                        optimizer.step()
            """,
            after="""
                import mindspore as ms
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import training as mp_train


                def fit(make_model, x, y):
                    model = make_model()
                    optimizer = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    model.set_train(True)
                    def forward_fn():
                        loss = mp_F.mse_loss(model(x), y)
                        return loss
                    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
                    for step in range(3):
                        loss, grads = grad_fn()
                        optimizer(grads)
                    model = make_model()
                    optimizer = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    def forward_fn_():
                        loss = mp_F.mse_loss(model(x), y)
                        return loss
                    grad_fn_ = ms.value_and_grad(forward_fn_, None, optimizer.parameters)
                    mp_train.train_mode(model)
                    for step in range(3):
                        loss, grads = grad_fn_()
                        optimizer(grads)
            """,
            note="torch builds every Module in training mode, a Cell starts in inference mode. A model built after another one's model.train() (here under the same name) whose mode nothing before its loop sets gets mindport.runtime.training.train_mode: training for the cells no set_train has reached, a mode set by the code kept (its BatchNorm took running statistics: 2e-2 off torch from the first loss). The second loop's functions take names of their own (forward_fn_, grad_fn_): a scope's hoisted names are never reused.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                def train(model, loader, epochs):
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    criterion = nn.CrossEntropyLoss()
                    for epoch in range(epochs):
                        for x, y in loader:
                            optimizer.zero_grad()
                            out = model(x)
                            loss = criterion(out, y)
                            loss.backward()
                            optimizer.step()
                    return loss
            """,
            after="""
                import mindspore as ms
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import losses as mp_losses


                def train(model, loader, epochs):
                    optimizer = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    criterion = mp_losses.CrossEntropyLoss()
                    def forward_fn(x, y):
                        out = model(x)
                        loss = criterion(out, y)
                        return loss
                    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
                    model.set_train(True)
                    for epoch in range(epochs):
                        for x, y in loader:
                            loss, grads = grad_fn(x, y)
                            optimizer(grads)
                    return loss
            """,
            note='zero_grad/forward/backward/step becomes forward_fn + value_and_grad + optimizer(grads), defined before the outer loop.',
        ),
        Example(
            before="""
                import torch


                def fit(x, y, w1, w2, lr, steps):
                    w1 = torch.tensor(w1, requires_grad=True)
                    w2 = torch.tensor(w2, requires_grad=True)
                    for t in range(steps):
                        y_pred = x.mm(w1).clamp(min=0).mm(w2)
                        loss = (y_pred - y).pow(2).sum()
                        print(t, loss.item())
                        loss.backward()
                        with torch.no_grad():
                            w1 -= lr * w1.grad
                            w2 -= lr * w2.grad
                            w1.grad.zero_()
                            w2.grad.zero_()
            """,
            after="""
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import tensor as mp_tensor
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def fit(x, y, w1, w2, lr, steps):
                    w1 = mp_tensor.tensor(w1)
                    w2 = mp_tensor.tensor(w2)
                    for t in range(steps):
                        def forward_fn(w1, w2):
                            y_pred = x.mm(mat2=w1).clamp(min=0).mm(mat2=w2)
                            loss = mp_math.sum((y_pred - y).pow(2))
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, leaves=2)
                        loss, grads = grad_fn(w1, w2)
                        print(t, loss.item())
                        mp_train.backward(grads)
                        mp_inplace.sub_(w1, lr * mp_tensor.grad(w1))
                        mp_inplace.sub_(w2, lr * mp_tensor.grad(w2))
                        mp_inplace.zero_(mp_tensor.grad(w1))
                        mp_inplace.zero_(mp_tensor.grad(w2))
            """,
            note="Tensors made with requires_grad=True and trained by hand: the forward becomes forward_fn, differentiated by position (leaves=2) where the loss was computed; the print between the loss and backward() stays in its place; backward() adds into .grad (read through mp_tensor.grad: None where no backward reached), and the manual update under no_grad is in place, as torch's -= on a tensor.",
        ),
        Example(
            before="""
                import torch


                def train(rnn, batches, loss_func):
                    optimizer = torch.optim.Adam(rnn.parameters(), lr=0.02)
                    h_state = None
                    for x, y in batches:
                        prediction, h_state = rnn(x, h_state)
                        h_state = h_state.data
                        loss = loss_func(prediction, y)
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
            """,
            after="""
                from mindport.runtime import optim as mp_optim
                from mindport.runtime import training as mp_train


                def train(rnn, batches, loss_func):
                    optimizer = mp_optim.Adam(rnn.trainable_params(), lr=0.02)
                    h_state = None
                    rnn.set_train(True)
                    mp_train.train_mode(loss_func)
                    for x, y in batches:
                        def forward_fn(h_state):
                            prediction, h_state = rnn(x, h_state)
                            loss = loss_func(prediction, y)
                            return loss, h_state
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, rnn, loss_func))
                        (loss, h_state), grads = grad_fn(h_state)
                        h_state = h_state.data
                        mp_train.zero_grad(optimizer)
                        mp_train.backward(grads)
                        optimizer(mp_train.grads_of(optimizer))
            """,
            note="State carried from one step to the next (an RNN's hidden state) is forward_fn's argument and comes back out; h_state = h_state.data stays outside, after the call; zero_grad() between forward and backward resets .grad before backward adds into it.",
        ),
        Example(
            before="""
                import torch


                class Trainer:
                    def __init__(self, generator, critic, d_opt):
                        self.G, self.D, self.D_opt = generator, critic, d_opt

                    def sample(self, z):
                        return self.G(z)

                    def critic_step(self, real, z):
                        self.D_opt.zero_grad()
                        loss = self.D(self.sample(z)).mean() - self.D(real).mean()
                        loss.backward()
                        self.D_opt.step()
                        return loss.item()
            """,
            after="""
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                class Trainer:
                    def __init__(self, generator, critic, d_opt):
                        self.G, self.D, self.D_opt = generator, critic, d_opt

                    def sample(self, z):
                        return self.G(z)

                    def critic_step(self, real, z):
                        mp_train.zero_grad(self.D_opt)
                        mp_train.train_mode(self.D)
                        mp_train.train_mode(self.G)
                        def forward_fn():
                            loss = mp_math.mean(self.D(self.sample(z))) - mp_math.mean(self.D(real))
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(self.D_opt, self.D, self, self.sample))
                        loss, grads = grad_fn()
                        mp_train.backward(grads)
                        self.D_opt(mp_train.grads_of(self.D_opt))
                        return loss.item()
            """,
            note="A Trainer handed its models by another file (EmilienDupont/wgan-gp): the models the step calls on self, directly or through the class's own methods (self.sample calling self.G), get mindport.runtime.training.train_mode before the step, in a file that never switches modes: torch trains a Module from birth, a Cell starts in inference mode (the generator's BatchNorm had normalized with running statistics). A mode the code set is kept.",
        ),
        Example(
            before="""
                import torch


                def train_step(model, optimizer, x, y):
                    optimizer.zero_grad()
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    loss.backward()
                    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    return loss.item(), norm
            """,
            after="""
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import training as mp_train


                def train_step(model, optimizer, x, y):
                    mp_train.zero_grad(optimizer)
                    model.set_train(True)
                    def forward_fn():
                        loss = mp_F.cross_entropy(model(x), y)
                        return loss
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, model))
                    loss, grads = grad_fn()
                    mp_train.backward(grads)
                    norm = mp_train.clip_grad_norm_(model.trainable_params(), 1.0)
                    optimizer(mp_train.grads_of(optimizer))
                    return loss.item(), norm
            """,
            note='A train_step function: its statements are the region; clip_grad_norm_ clips .grad and returns the norm; optimizer.step() hands the optimizer the gradients from .grad.',
        ),
        Example(
            before="""
                import torch


                def contrastive_step(net, optimizer, a, b, temperature):
                    out = torch.cat([net(a), net(b)], dim=0)
                    sim = torch.exp(torch.mm(out, out.t()) / temperature)
                    mask = (torch.ones_like(sim) - torch.eye(out.shape[0])).bool()
                    loss = -torch.log(sim.diagonal() / sim.masked_select(mask).sum()).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    return loss.item()
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import tensor as mp_tensor
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def contrastive_step(net, optimizer, a, b, temperature):
                    mp_train.train_mode(net)
                    def forward_fn():
                        out = ops.cat(mp_tensor.promoted([net(a), net(b)]), axis=0)
                        sim = ops.exp(ops.mm(out, out.t()) / temperature)
                        mask = mp_tensor.bool_((ops.ones_like(sim) - ops.eye(out.shape[0])))
                        loss = -mp_math.mean(ops.log(sim.diagonal() / mp_math.sum(sim.masked_select(mask))))
                        return loss
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, net))
                    loss, grads = grad_fn()
                    mp_train.zero_grad(optimizer)
                    mp_train.backward(grads)
                    optimizer(mp_train.grads_of(optimizer))
                    return loss.item()
            """,
            note='A SimCLR-style mask in the loss: mp_tensor.bool_(...) is a call on a runtime module, not a method changing its receiver in place (h.detach_()), so forward_fn carries no state.',
        ),
        Example(
            before="""
                import torch


                def gan_step(netG, netD, real, noise, criterion, optimizerD, optimizerG, ones, zeros):
                    netD.zero_grad()
                    errD_real = criterion(netD(real), ones)
                    errD_real.backward()
                    fake = netG(noise)
                    errD_fake = criterion(netD(fake.detach()), zeros)
                    errD_fake.backward()
                    optimizerD.step()
                    netG.zero_grad()
                    errG = criterion(netD(fake), ones)
                    errG.backward()
                    optimizerG.step()
                    return errD_real + errD_fake, errG
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import training as mp_train


                def gan_step(netG, netD, real, noise, criterion, optimizerD, optimizerG, ones, zeros):
                    mp_train.zero_grad(netD)
                    mp_train.train_mode(criterion)
                    mp_train.train_mode(netD)
                    def forward_fn_errD_real():
                        errD_real = criterion(netD(real), ones)
                        return errD_real
                    grad_fn_errD_real = mp_train.value_and_grad(forward_fn_errD_real, mp_train.parameters(netD, optimizerD, netG, optimizerG, criterion))
                    errD_real, grads_errD_real = grad_fn_errD_real()
                    mp_train.backward(grads_errD_real)
                    mp_train.train_mode(netG)
                    def forward_fn_errD_fake():
                        fake = netG(noise)
                        errD_fake = criterion(netD(ops.stop_gradient(fake)), zeros)
                        return errD_fake, fake
                    grad_fn_errD_fake = mp_train.value_and_grad(forward_fn_errD_fake, mp_train.parameters(netD, optimizerD, netG, optimizerG, criterion))
                    (errD_fake, fake), grads_errD_fake = grad_fn_errD_fake()
                    mp_train.backward(grads_errD_fake)
                    optimizerD(mp_train.grads_of(optimizerD))
                    mp_train.zero_grad(netG)
                    def forward_fn_errG():
                        fake = netG(noise)
                        errG = criterion(netD(fake), ones)
                        return errG
                    grad_fn_errG = mp_train.value_and_grad(forward_fn_errG, mp_train.parameters(netD, optimizerD, netG, optimizerG, criterion))
                    errG, grads_errG = grad_fn_errG()
                    mp_train.backward(grads_errG)
                    optimizerG(mp_train.grads_of(optimizerG))
                    return errD_real + errD_fake, errG
            """,
            note="A GAN step: one forward_fn per backward, each differentiated where its loss was computed; the discriminator's two backward calls add into the same .grad; the generator's output is computed again in the generator's forward_fn, from the same noise, after the discriminator's step.",
        ),
        Example(
            before="""
                import torch


                def fit(model, x, y, criterion, steps):
                    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5)
                    for step in range(steps):
                        def closure():
                            optimizer.zero_grad()
                            loss = criterion(model(x), y)
                            loss.backward()
                            return loss
                        optimizer.step(closure)
            """,
            after="""
                from mindport.runtime import training as mp_train


                def fit(model, x, y, criterion, steps):
                    optimizer = mp_train.LBFGS(model.trainable_params(), lr=0.5)
                    for step in range(steps):
                        def closure():
                            mp_train.zero_grad(optimizer)
                            model.set_train(True)
                            def forward_fn():
                                loss = criterion(model(x), y)
                                return loss
                            grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, criterion, model))
                            loss, grads = grad_fn()
                            mp_train.backward(grads)
                            return loss
                        mp_train.step(optimizer, closure)
            """,
            note="LBFGS with a closure: the closure's body is the region; mindport's LBFGS (torch's algorithm) calls it as often as it needs.",
        ),
        Example(
            before="""
                import torch


                def train(model, loader, optimizer, accum_steps):
                    for i, (x, y) in enumerate(loader):
                        out_a, out_b = model(x)
                        loss_a = ((out_a - y) ** 2).mean()
                        loss_b = (out_b - y).abs().mean()
                        (loss_a / accum_steps).backward(retain_graph=True)
                        (loss_b / accum_steps).backward()
                        if (i + 1) % accum_steps == 0:
                            optimizer.step()
                            optimizer.zero_grad()
            """,
            after="""
                from mindport.runtime import training as mp_train


                def train(model, loader, optimizer, accum_steps):
                    mp_train.train_mode(model)
                    for i, (x, y) in enumerate(loader):
                        def forward_fn_loss_a():
                            out_a, out_b = model(x)
                            loss_a = ((out_a - y) ** 2).mean()
                            return (loss_a / accum_steps), loss_a, out_b
                        grad_fn_loss_a = mp_train.value_and_grad(forward_fn_loss_a, mp_train.parameters(optimizer, model))
                        (_, loss_a, out_b), grads_loss_a = grad_fn_loss_a()
                        def forward_fn_loss_b():
                            out_a, out_b = model(x)
                            loss_b = (out_b - y).abs().mean()
                            return (loss_b / accum_steps), loss_b
                        grad_fn_loss_b = mp_train.value_and_grad(forward_fn_loss_b, mp_train.parameters(optimizer, model))
                        (_, loss_b), grads_loss_b = grad_fn_loss_b()
                        mp_train.backward(grads_loss_a)
                        mp_train.backward(grads_loss_b)
                        if (i + 1) % accum_steps == 0:
                            optimizer(mp_train.grads_of(optimizer))
                            mp_train.zero_grad(optimizer)
            """,
            note='Two losses on one forward (backward(retain_graph=True)), scaled for accumulation: each is differentiated on its own, both add into .grad, and the optimizer steps every accum_steps batches.',
        ),
        Example(
            before="""
                import torch
                import torch.nn.functional as F


                def train(model, optimizer, loader, clip):
                    for x, y in loader:
                        optimizer.zero_grad()
                        loss = F.mse_loss(model(x), y)
                        loss.backward()
                        if clip > 0:
                            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                        optimizer.step()
            """,
            after="""
                import mindspore as ms
                from mindspore import ops
                from mindport.runtime import nn_functional as mp_F


                def train(model, optimizer, loader, clip):
                    def forward_fn(x, y):
                        loss = mp_F.mse_loss(model(x), y)
                        return loss
                    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
                    model.set_train(True)
                    for x, y in loader:
                        loss, grads = grad_fn(x, y)
                        if clip > 0:
                            grads = ops.clip_by_global_norm(grads, clip)
                        optimizer(grads)
            """,
            note="Clipping under an if after backward(): the if stays, and clips the step's gradients.",
        ),
        Example(
            before="""
                import torch


                def train(model, loader, optimizer):
                    model.train()
                    for data in loader:
                        optimizer.zero_grad()
                        model(data)
                        loss = len(data) * model.loss
                        loss.backward()
                        optimizer.step()
            """,
            after="""
                from mindport.runtime import training as mp_train


                def train(model, loader, optimizer):
                    model.set_train(True)
                    for data in loader:
                        mp_train.zero_grad(optimizer)
                        def forward_fn():
                            model(data)
                            loss = len(data) * model.loss
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, model))
                        loss, grads = grad_fn()
                        mp_train.backward(grads)
                        optimizer(mp_train.grads_of(optimizer))
            """,
            note="A loss the model's forward stored on it (`model(data)`, then `model.loss`): the call is part of forward_fn (left outside, `model.loss` was a constant there and every gradient zero).",
        ),
        Example(
            before="""
                import torch


                def fit(x, y, w1, w2, steps):
                    for t in range(steps):
                        loss = ((x.mm(w1).tanh().mm(w2) - y) ** 2).mean()
                        if t % 2 == 0:
                            loss.backward(inputs=[w1])
                        else:
                            loss.backward(inputs=[w2])
            """,
            after="""
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def fit(x, y, w1, w2, steps):
                    for t in range(steps):
                        def forward_fn():
                            loss = mp_math.mean(((mp_math.tanh(x.mm(mat2=w1)).mm(mat2=w2) - y) ** 2))
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(w1, w2))
                        loss, grads = grad_fn()
                        if t % 2 == 0:
                            mp_train.backward(grads, inputs=[w1])
                        else:
                            mp_train.backward(grads, inputs=[w2])
            """,
            note="backward(inputs=[...]) adds only into those tensors' .grad; the backward calls of both branches share the region's gradients, which cover every tensor either names.",
        ),
        Example(
            before="""
                import torch


                def critic_step(critic, optimizer, real, fake, alpha):
                    optimizer.zero_grad()
                    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
                    score = critic(interp)
                    grads = torch.autograd.grad(score, interp, grad_outputs=torch.ones_like(score), create_graph=True)[0]
                    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
                    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
                    loss.backward()
                    optimizer.step()
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def critic_step(critic, optimizer, real, fake, alpha):
                    mp_train.zero_grad(optimizer)
                    interp = (alpha * real + (1 - alpha) * fake)
                    mp_train.train_mode(critic)
                    def forward_fn(interp):
                        def score_fn(interp):
                            score = critic(interp)
                            return score
                        grads = mp_train.grad_graph(score_fn, (interp,), grad_outputs=lambda score: ops.ones_like(score))[0]
                        penalty = mp_math.mean(((mp_math.norm(grads, p=2, dim=1) - 1) ** 2))
                        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
                        return loss
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, critic), leaves=1)
                    loss, grads_ = grad_fn(interp)
                    mp_train.backward(grads_)
                    optimizer(mp_train.grads_of(optimizer))
            """,
            note="A WGAN-GP gradient penalty: torch.autograd.grad(create_graph=True) becomes a function of its inputs (the statements computing the outputs from them), differentiated by grad_graph (mindspore.vjp) inside forward_fn, so the loss's gradient goes through the gradient; grad_outputs that reads the outputs is a function of them.",
        ),
        Example(
            before="""
                import torch
                import torch.nn.functional as F


                def adapt(model, x, y, lr=0.1):
                    fast = dict(model.named_parameters())
                    logits = F.linear(x, fast["weight"], fast["bias"])
                    loss = F.cross_entropy(logits, y)
                    grads = torch.autograd.grad(loss, fast.values(), create_graph=True)
                    return {name: w - lr * g for (name, w), g in zip(fast.items(), grads)}


                def meta_step(model, optimizer, tasks):
                    optimizer.zero_grad()
                    total = 0
                    for sx, sy, qx, qy in tasks:
                        fast = adapt(model, sx, sy)
                        total = total + F.cross_entropy(F.linear(qx, fast["weight"], fast["bias"]), qy)
                    total.backward()
                    optimizer.step()
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import training as mp_train
                from mindport.runtime import containers as mp_containers


                def adapt(model, x, y, lr=0.1):
                    fast = dict(mp_containers.named_parameters(model))
                    def loss_fn(fast):
                        logits = ops.dense(x, fast["weight"], bias=fast["bias"])
                        loss = mp_F.cross_entropy(logits, y)
                        return loss
                    grads = mp_train.grad_graph_values(loss_fn, fast)
                    return {name: w - lr * g for (name, w), g in zip(fast.items(), grads)}


                def meta_step(model, optimizer, tasks):
                    mp_train.zero_grad(optimizer)
                    total = 0
                    def forward_fn(total):
                        for sx, sy, qx, qy in tasks:
                            fast = adapt(model, sx, sy)
                            total = total + mp_F.cross_entropy(ops.dense(qx, fast["weight"], bias=fast["bias"]), qy)
                        return total
                    grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, adapt))
                    total, grads = grad_fn(total)
                    mp_train.backward(grads)
                    optimizer(mp_train.grads_of(optimizer))
            """,
            note="MAML's inner step: torch.autograd.grad(loss, fast.values(), create_graph=True) over a dict of weights by name becomes a function of the dict (the statements computing the loss from it), differentiated over its values by grad_graph_values; the meta-step's backward, in another function, differentiates through it.",
        ),
        Example(
            before="""
                import torch
                import torch.nn.functional as F


                def train(x, y, steps):
                    W = torch.zeros(4, 3, requires_grad=True)
                    b = torch.zeros(3, requires_grad=True)
                    params = [W, b]
                    opt = torch.optim.SGD(params, lr=0.5)
                    for step in range(steps):
                        loss = F.cross_entropy(x @ W + b, y)
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
            """,
            after="""
                import mindspore as ms
                from mindspore import ops
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import optim as mp_optim
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import training as mp_train


                def train(x, y, steps):
                    W = ms.Parameter(ops.zeros((4, 3)), name='W')
                    b = ms.Parameter(ops.zeros(3), name='b')
                    params = [W, b]
                    opt = ms_optim.SGD(mp_optim.distinct_names(params), lr=0.5)
                    for step in range(steps):
                        def forward_fn(W, b):
                            loss = mp_F.cross_entropy(x @ W + b, y)
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt), leaves=2)
                        loss, grads = grad_fn(W, b)
                        mp_train.zero_grad(opt)
                        mp_train.backward(grads)
                        opt(mp_train.grads_of(opt))
            """,
            note="requires_grad tensors handed to an optimizer through a list named first (params = [W, b]) become Parameters, as when the list is written in the call: MindSpore's optimizers take Parameters only.",
        ),
        Example(
            before="""
                import torch
                import torch.nn.functional as F


                def gan_step(g, d, g_opt, d_opt, real):
                    fake = g(torch.randn(real.shape[0], 2))
                    d_opt.zero_grad()
                    d_loss = F.softplus(-d(real)).mean() + F.softplus(d(fake.detach())).mean()
                    d_loss.backward()
                    d_opt.step()
                    g_opt.zero_grad()
                    g_loss = F.softplus(-d(fake)).mean()
                    g_loss.backward()
                    g_opt.step()
            """,
            after="""
                from mindspore import ops
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def gan_step(g, d, g_opt, d_opt, real):
                    draw = ops.randn(real.shape[0], 2)
                    mp_train.zero_grad(d_opt)
                    mp_train.train_mode(g)
                    mp_train.train_mode(d)
                    def forward_fn_d_loss():
                        fake = g(draw)
                        d_loss = mp_math.mean(ops.softplus(-d(real))) + mp_math.mean(ops.softplus(d(ops.stop_gradient(fake))))
                        return d_loss, fake
                    grad_fn_d_loss = mp_train.value_and_grad(forward_fn_d_loss, mp_train.parameters(d_opt, g_opt, g, d))
                    (d_loss, fake), grads_d_loss = grad_fn_d_loss()
                    mp_train.backward(grads_d_loss)
                    d_opt(mp_train.grads_of(d_opt))
                    mp_train.zero_grad(g_opt)
                    def forward_fn_g_loss():
                        fake = g(draw)
                        g_loss = mp_math.mean(ops.softplus(-d(fake)))
                        return g_loss
                    grad_fn_g_loss = mp_train.value_and_grad(forward_fn_g_loss, mp_train.parameters(d_opt, g_opt, g, d))
                    g_loss, grads_g_loss = grad_fn_g_loss()
                    mp_train.backward(grads_g_loss)
                    g_opt(mp_train.grads_of(g_opt))
            """,
            note="A GAN step whose fake batch draws its noise inline (g(torch.randn(...))) and feeds both backward calls: the draw becomes a statement of its own before the step, so both forward_fns compute from the noise torch drew once.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn

                model = nn.Linear(4, 2)
                criterion = nn.MSELoss()
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                x, y = torch.ones(3, 4), torch.zeros(3, 2)
                opt.zero_grad()
                criterion(model(x), y).backward()
                opt.step()
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import losses as mp_losses
                from mindport.runtime import training as mp_train

                model = nn.Dense(in_channels=4, out_channels=2)
                criterion = mp_losses.MSELoss()
                opt = ms_optim.SGD(model.trainable_params(), lr=0.1)
                x, y = ops.ones((3, 4)), ops.zeros((3, 2))
                mp_train.zero_grad(opt)
                model.set_train(True)
                def forward_fn():
                    loss_ = criterion(model(x), y)
                    return loss_
                grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt, criterion, model))
                loss_, grads = grad_fn()
                mp_train.backward(grads)
                opt(mp_train.grads_of(opt))
            """,
            note="A backward called alone on the loss expression (criterion(model(x), y).backward()): the loss becomes a statement of its own, the forward of the region; the model's construction stays where it was.",
        ),
        Example(
            before="""
                import torch


                def compare(net_a, net_b, opt_a, opt_b, loss_func, x, y, steps):
                    for t in range(steps):
                        pred_a, pred_b = net_a(x), net_b(x)
                        loss_a, loss_b = loss_func(pred_a, y), loss_func(pred_b, y)
                        opt_a.zero_grad()
                        opt_b.zero_grad()
                        loss_a.backward()
                        loss_b.backward()
                        opt_a.step()
                        opt_b.step()
            """,
            after="""
                from mindport.runtime import training as mp_train


                def compare(net_a, net_b, opt_a, opt_b, loss_func, x, y, steps):
                    mp_train.train_mode(net_a)
                    mp_train.train_mode(net_b)
                    mp_train.train_mode(loss_func)
                    for t in range(steps):
                        def forward_fn():
                            pred_a, pred_b = net_a(x), net_b(x)
                            loss_a, loss_b = loss_func(pred_a, y), loss_func(pred_b, y)
                            return loss_a, loss_b
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt_a, opt_b, net_a, net_b, loss_func), losses=2)
                        (loss_a, loss_b), (grads, grads_loss_b) = grad_fn()
                        mp_train.zero_grad(opt_a)
                        mp_train.zero_grad(opt_b)
                        mp_train.backward(grads)
                        mp_train.backward(grads_loss_b)
                        opt_a(mp_train.grads_of(opt_a))
                        opt_b(mp_train.grads_of(opt_b))
            """,
            note="Two models side by side, both losses computed in one tuple assignment: one forward_fn gives both (losses=2); nothing steps or resets between the two backward calls, so each optimizer's gradients are torch's accumulated .grad, taken in one differentiation.",
        ),
        Example(
            before="""
                import torch


                def sweep(make_model, lrs, loader, criterion):
                    for lr in lrs:
                        model = make_model()
                        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
                        for x, y in loader:
                            optimizer.zero_grad()
                            loss = criterion(model(x), y)
                            loss.backward()
                            optimizer.step()
            """,
            after="""
                import mindspore as ms
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import training as mp_train


                def sweep(make_model, lrs, loader, criterion):
                    for lr in lrs:
                        model = make_model()
                        optimizer = ms_optim.SGD(model.trainable_params(), lr=lr)
                        def forward_fn(x, y):
                            loss = criterion(model(x), y)
                            return loss
                        grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
                        model.set_train(True)
                        mp_train.train_mode(criterion)
                        for x, y in loader:
                            loss, grads = grad_fn(x, y)
                            optimizer(grads)
            """,
            note="An optimizer built per setting in an outer loop: forward_fn and grad_fn go inside that loop, after it (grad_fn takes the optimizer's parameters when it is built), not before the outermost loop.",
        ),
        Example(
            before="""
                import torch


                def fit(model, x, y, criterion, steps):
                    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
                    for epoch in range(steps):
                        output = model(x)
                        optimizer.zero_grad()
                        loss = criterion(output, y)
                        loss.backward()
                        optimizer.step()
                        prediction = output.argmax(1)
            """,
            after="""
                from mindport.runtime import optim as mp_optim
                from mindport.runtime import training as mp_train


                def fit(model, x, y, criterion, steps):
                    optimizer = mp_optim.Adam(model.trainable_params(), lr=0.1)
                    model.set_train(True)
                    mp_train.train_mode(criterion)
                    for epoch in range(steps):
                        mp_train.zero_grad(optimizer)
                        def forward_fn():
                            output = model(x)
                            loss = criterion(output, y)
                            return loss, output
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, model, criterion))
                        (loss, output), grads = grad_fn()
                        mp_train.backward(grads)
                        optimizer(mp_train.grads_of(optimizer))
                        prediction = output.argmax(1)
            """,
            note="The model called before zero_grad() (or a print) and the loss computed after it: the model call is part of the differentiated function (the general backward region), not a constant handed to it; output comes back out for the code after.",
        ),
        Example(
            before="""
                import torch


                def fit(model, x, y, criterion, epochs):
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                    for epoch in range(epochs):
                        for i in range(len(x)):
                            output = model(x[i])
                            optimizer.zero_grad()
                            loss = criterion(output, y[i])
                            loss.backward()
                            optimizer.step()
                        model.eval()
            """,
            after="""
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import training as mp_train


                def fit(model, x, y, criterion, epochs):
                    optimizer = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    model.set_train(True)
                    mp_train.train_mode(criterion)
                    for epoch in range(epochs):
                        for i in range(len(x)):
                            mp_train.zero_grad(optimizer)
                            def forward_fn():
                                output = model(x[i])
                                loss = criterion(output, y[i])
                                return loss
                            grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(optimizer, model, criterion))
                            loss, grads = grad_fn()
                            mp_train.backward(grads)
                            optimizer(mp_train.grads_of(optimizer))
                        model.set_train(False)
            """,
            note="A file that never calls train(): torch's Module trains from birth, a Cell does not, so set_train(True) goes once before the outermost loop of the scope (also when the file calls eval() later: torch trains until then, and stays in inference mode after it, as the port does).",
        ),
        Example(
            before="""
                import torch


                def train(model, x, y):
                    opt = torch.optim.SGD(model.parameters(), lr=0.1)
                    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
                    for epoch in range(4):
                        if epoch == 2:
                            for g in opt.param_groups:
                                g["lr"] = g["lr"] * 0.3
                        loss = ((model(x) - y) ** 2).mean()
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        sched.step()
            """,
            after="""
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import optim as mp_optim
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def train(model, x, y):
                    opt = ms_optim.SGD(model.trainable_params(), lr=0.1)
                    sched = ms_optim.lr_scheduler.StepLR(opt, step_size=2)
                    model.set_train(True)
                    for epoch in range(4):
                        if epoch == 2:
                            for g in opt.param_groups:
                                mp_optim.set_group(g, "lr", float(g["lr"]) * 0.3)
                        def forward_fn():
                            loss = mp_math.mean(((model(x) - y) ** 2))
                            return loss
                        grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(opt, model))
                        loss, grads = grad_fn()
                        mp_train.zero_grad(opt)
                        mp_train.backward(grads)
                        opt(mp_train.grads_of(opt))
                        sched.step()
            """,
            note="A hand edit of a param group's lr writes the group's lr Parameter in place (mindport.runtime.optim.set_group): a MindSpore scheduler keeps assigning that Parameter, so a value stored over it cut every later scheduler.step() off.",
        ),
        Example(
            before="""
                import torch


                class Trainer:
                    def __init__(self, model):
                        self.model = model
                        self.optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
                        self.loss = None

                    def run(self, batches):
                        for x, y in batches:
                            logits, self.loss = self.model(x, y)
                            self.model.zero_grad(set_to_none=True)
                            self.loss.backward()
                            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                            self.optimizer.step()
                            print(self.loss.item())
            """,
            after="""
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import training as mp_train


                class Trainer:
                    def __init__(self, model):
                        self.model = model
                        self.optimizer = ms_optim.AdamW(model.trainable_params(), lr=0.1)
                        self.loss = None

                    def run(self, batches):
                        self.model.set_train(True)
                        for x, y in batches:
                            mp_train.zero_grad(self.model, set_to_none=True)
                            def forward_fn():
                                logits, self.loss = self.model(x, y)
                                loss_ = self.loss
                                return loss_
                            grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(self.model, self.optimizer, self))
                            loss_, grads = grad_fn()
                            mp_train.backward(grads)
                            mp_train.clip_grad_norm_(self.model.trainable_params(), 1.0)
                            self.optimizer(mp_train.grads_of(self.optimizer))
                            print(self.loss.item())
            """,
            note="A Trainer that keeps its loss on self (minGPT's): the attribute stored in an unpacking is the loss's binding; self is changed, not rebound (forward_fn neither takes nor returns it), and its other attributes stay apart (the zero_grad of self.model between the forward and the backward reads no forward result, so it runs before).",
        ),
        Example(
            before="""
                import torch


                def perturb(model, x, y, kind, steps=3):
                    x_adv = x.detach() + 0.01
                    if kind == "sign":
                        for _ in range(steps):
                            x_adv.requires_grad_()
                            loss = ((model(x_adv) - y) ** 2).sum()
                            grad = torch.autograd.grad(loss, [x_adv])[0]
                            x_adv = x_adv.detach() + 0.05 * torch.sign(grad)
                    else:
                        delta = torch.zeros_like(x, requires_grad=True)
                        opt_delta = torch.optim.SGD([delta], lr=0.05)
                        for _ in range(steps):
                            opt_delta.zero_grad()
                            loss = -((model(x + delta) - y) ** 2).sum()
                            loss.backward()
                            opt_delta.step()
                        x_adv = (x + delta).detach()
                    return x_adv
            """,
            after="""
                import mindspore as ms
                from mindspore import ops
                from mindspore.experimental import optim as ms_optim
                from mindport.runtime import inplace as mp_inplace
                from mindport.runtime import math as mp_math
                from mindport.runtime import training as mp_train


                def perturb(model, x, y, kind, steps=3):
                    x_adv = ops.stop_gradient(x) + 0.01
                    if kind == "sign":
                        mp_train.train_mode(model)
                        for _ in range(steps):
                            x_adv = mp_inplace.requires_grad_(x_adv)
                            def forward_fn(x_adv):
                                loss = mp_math.sum(((model(x_adv) - y) ** 2))
                                return loss
                            grad_fn = mp_train.value_and_grad(forward_fn, mp_train.parameters(model), leaves=1)
                            loss, grads = grad_fn(x_adv)
                            grad = mp_train.grads_for(grads, [x_adv])[0]
                            x_adv = ops.stop_gradient(x_adv) + 0.05 * ops.sign(grad)
                    else:
                        delta = ms.Parameter(ops.zeros_like(x), name='delta')
                        opt_delta = ms_optim.SGD([delta], lr=0.05)
                        def forward_fn():
                            loss = -mp_math.sum(((model(x + delta) - y) ** 2))
                            return loss
                        grad_fn = ms.value_and_grad(forward_fn, None, opt_delta.parameters)
                        mp_train.train_mode(model)
                        for _ in range(steps):
                            loss, grads = grad_fn()
                            opt_delta(grads)
                        x_adv = ops.stop_gradient((x + delta))
                    return x_adv
            """,
            note="TRADES' attack: the sign step differentiates the input only; the optimizer the other branch of the if makes (opt_delta) is not one of its weight sources (naming it there was an UnboundLocalError when that branch had not run).",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.optimizers: set[str] = set()
        self.schedulers: set[str] = set()  # names bound to a torch.optim.lr_scheduler object in the file
        self.scalers: set[str] = set()
        self._loop_targets: list[list[str]] = []
        self._loop_bodies: set[int] = set()
        self._preludes: list[tuple[cst.For, list[cst.BaseStatement]]] = []
        # id(scope) -> the names the hoisted preludes of its native loops bind (forward_fn, grad_fn): a later loop of
        # the scope (native or a region) takes other names, or its definitions replaced the earlier loop's
        self._hoisted: dict[int, set[str]] = {}
        self._scope_nodes: dict[int, cst.CSTNode] = {}  # id(scope) -> its module/function node (train-mode check)
        # (id(scope), optimizer) of the loops converted so far, and of those never resetting their gradients
        self._stepped: set[tuple[int, str]] = set()
        self._never_reset: set[tuple[int, str]] = set()
        self._stores: set[int] = set()  # subscripts assigned to (opt.param_groups[0]['lr'] = ...): not reads
        self._group_names: set[str] = set()  # loop targets over an optimizer's param_groups (for g in opt.param_groups)
        self._own_group_names: set[str] = set()  # of those, over an optimizer class's own (for g in self.param_groups)
        self._native: set[int] = set()  # loops the opt(grads) rewrite takes (decided on the original loop)
        self._native_bodies: set[int] = set()
        self._def_bodies: set[int] = set()
        self.leaves: set[str] = set()  # names of tensors made with requires_grad=True (differentiated by position)
        self._sites: dict[int, cst.Call] = {}  # updated backward call -> original (for positions), not yet placed
        self._placed: set[int] = set()
        self._leaf_calls: set[int] = set()  # x.requires_grad_() calls that make a leaf: become x
        self._grad_calls: set[int] = set()  # torch.autograd.grad(...) calls (sites like .backward())
        self._handed_copies: set[str] = set()  # the copies a loop's grad of a handed loss reads (_handed_losses)
        # torch.autograd.grad(..., create_graph=True) calls (updated id -> original): a differentiated function each
        self._graph_calls: dict[int, cst.Call] = {}
        self._owners: set[str] = set()  # models whose parameters the file hands out (visit_Module)
        self._modes_set = False  # the file calls train()/set_train somewhere (sets the training mode itself)
        self._moded: set[tuple[int, str]] = set()  # (id(scope), model) put in train mode by a region
        self._loop_original: cst.For | None = None  # the loop _rewrite is working on, as the source wrote it
        self._param_vars: list[set[str]] = []  # per enclosing for: its targets when it iterates over parameters
        self._optimized: set[str] = set()  # names read in an optimizer's params argument
        self._optimized_attrs: set[str] = set()  # self.X listed in an optimizer's params (optim.Adam([self.X]))
        self._functions: set[str] = set()  # functions the file defines (no model: no set_train)
        # module-level functions -> (positions, names) of the parameters they call zero_grad() on
        self._resetting: dict[str, tuple[set[int], set[str]]] = {}
        self._def_params: dict[int, set[str]] = {}  # id(function body) -> the function's parameter names
        self._own_backward = False  # a class of the file defines a backward method of its own (a flow's inverse)
        # module-level functions -> the module names they read (through the file's other functions too), and the
        # leaves some of them read that way (``def forward(x): return w * x``): those become Parameters, differentiated
        # as weights (a function reading a global does not see a copy handed to forward_fn by position)
        self._function_globals: dict[str, set[str]] = {}
        self._global_leaves: set[str] = set()
        self._leaf_flags: set[int] = set()  # x.requires_grad = True statements (Assign nodes)
        self._loops: list[int] = [0]  # per scope (module, then each function): loops open around the node
        self._outer_loops: dict[int, cst.CSTNode] = {}  # per scope: the outermost loop being visited
        self._mode_preludes: set[int] = set()  # ids of the preludes holding model.set_train(True)
        self._class_bodies: list[dict[str, cst.FunctionDef]] = []  # per enclosing class: its methods by name
        self._engine_classes = 0  # open classes that are an autograd engine of the project's own (micrograd's Value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        self._class_bodies.append({s.name.value: s for s in body if isinstance(s, cst.FunctionDef)})
        self._engine_classes += self._is_engine(node.name.value)

    def leave_ClassDef(self, original_node, updated_node):
        self._class_bodies.pop()
        self._engine_classes -= self._is_engine(original_node.name.value)
        return updated_node

    def _is_engine(self, name: str) -> bool:
        """A class the project defines as its own autograd engine (project.engine_classes: ``backward(self)``, no
        torch base): its methods' arithmetic on ``.grad``/``.data`` is its own, not a tensor update."""
        return getattr(self.scope, "returns", {}).get(name) == "engine"

    def _engine_value(self, expr: cst.BaseExpression) -> bool:
        """Is ``expr`` (``c`` of ``c.backward()``, ``p`` of ``p.data -= ...``) an object of the project's own autograd
        engine: made by its class, by arithmetic on its values, or returned by a function returning them."""
        return receiver_kind(expr, self.scope) == "engine"

    # --- opt.param_groups[i]['lr'] read: a Python float in torch, a Parameter in experimental.optim
    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stores.add(id(node.target))

    def leave_AugAssign(self, original_node, updated_node):
        """``w -= lr * w.grad`` (a leaf tensor, ``p.data``, or an update read off ``.grad``): in place, as torch's
        ``-=`` on a tensor is; a rebinding would leave the tensor (and its ``.grad``) behind."""
        if self._group_item(original_node.target) is not None and isinstance(updated_node.target, cst.Subscript):
            symbol = code_of(updated_node.operator).strip()[:-1]  # ``*=`` -> ``*``
            target = code_of(updated_node.target)
            return self._set_group(updated_node.target, f"{target} {symbol} ({code_of(updated_node.value)})")
        op = _INPLACE.get(type(original_node.operator))
        target = original_node.target
        data = isinstance(target, cst.Attribute) and target.attr.value == "data"
        tensor_name = isinstance(target, cst.Name) and (target.value in self.leaves or any(
            target.value in names for names in self._param_vars))
        if op is None or not (data or tensor_name or _reads_grad(original_node.value)):
            return updated_node
        if self._engine_classes or (isinstance(target, cst.Attribute) and self._engine_value(target.value)):
            return updated_node  # self.grad += out.grad in a Value class of the file's own engine, v.data -= lr * v.grad
        if not (data or tensor_name) and isinstance(target, cst.Name) and operand_kind(target, self.scope) == "python":
            return updated_node  # grad_norm += p.grad.norm().item() ** 2 on grad_norm = 0.0: a Python number
        new_target = updated_node.target
        if data and isinstance(new_target, cst.Attribute) and new_target.attr.value == "data":
            new_target = new_target.value
        self.ctx.converted_sites += 1
        inplace = self.ctx.alias_for("mindport.runtime.inplace")
        return cst.Expr(parse_expression(f"{inplace}.{op}({code_of(new_target)}, {code_of(updated_node.value)})"))

    def visit_Del(self, node: cst.Del) -> None:
        self._stores.add(id(node.target))

    def leave_Subscript(self, original_node, updated_node):
        if id(original_node) in self._stores or not self._reads_lr(original_node):
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Call(func=cst.Name("float"), args=[cst.Arg(updated_node)])

    def _reads_lr(self, node: cst.Subscript) -> bool:
        """``opt.param_groups[i]['lr']`` on an optimizer of the file."""
        key = node.slice[0].slice if len(node.slice) == 1 else None
        groups = node.value
        if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)
                and key.value.evaluated_value == "lr"):
            return False
        if isinstance(groups, cst.Name):  # g['lr'], g bound by a loop over param_groups: torch's float, not an alias
            # of the group's Parameter (a saved list kept moving with it); a custom optimizer's own step reads its
            # groups' lr at once (CustomOptimizerTransform), as MindSpore's own optimizers do
            return groups.value in self._group_names and groups.value not in self._own_group_names
        return isinstance(groups, cst.Subscript) \
            and isinstance(groups.value, cst.Attribute) and groups.value.attr.value == "param_groups" \
            and isinstance(groups.value.value, cst.Name) and groups.value.value.value in self.optimizers

    # --- what names are: optimizers and loss scalers, from the file's assignments
    def visit_Assign(self, node: cst.Assign) -> None:
        self._stores.update(id(t.target) for t in node.targets)
        if _makes_leaf(node.value, self.scope):
            self.leaves.update(n for t in node.targets for n in target_names(t.target))
            self._leaf_calls.update(id(c) for c in _all_calls(node.value) if _marks_leaf(c))
        if (name := _leaf_flag(node)) is not None and not any(name in names for names in self._param_vars):
            # (p.requires_grad = True in a loop over parameters unfreezes a model's parameter: it stays)
            self.leaves.add(name)
            self._leaf_flags.add(id(node))
        self._learn(node)

    def _learn(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            qual = self.scope.resolve_torch(node.value.func) or ""
            names = [n for t in node.targets for n in target_names(t.target)]
            if qual.startswith("torch.optim.") and ".lr_scheduler." not in qual:
                self.optimizers.update(names)
            elif qual.startswith("torch.optim.lr_scheduler."):
                self.schedulers.update(names)
            elif qual.endswith("GradScaler"):
                self.scalers.update(names)

    def visit_Module(self, node: cst.Module) -> None:
        self._scope_nodes[id(self.scope)] = node
        # models whose parameters the file hands out (model.parameters()), and whether it ever switches modes: a torch
        # Module trains from birth, a Cell does not, so a file that never calls train()/eval() trains them in train mode
        self._owners = _parameter_owners(node)
        self._modes_set = _sets_train_mode(node)  # eval() alone: torch trains in train mode until it is called
        # optimizers and scalers of the whole file first: a train_step function may stand before the code making them
        for assign in all_nodes(node, cst.Assign):
            self._learn(assign)
        # names bound to an optimizer's param groups by a loop or a comprehension anywhere in the file (a
        # comprehension's element is visited before its ``for``)
        for loop in (*all_nodes(node, cst.For), *all_nodes(node, cst.CompFor)):
            groups = isinstance(loop.iter, cst.Attribute) and loop.iter.attr.value == "param_groups"
            if groups or _pairs_param_groups(loop.iter):
                self._group_names.update(target_names(loop.target))
            if groups and isinstance(loop.iter.value, cst.Name) and loop.iter.value.value == "self":
                self._own_group_names.update(target_names(loop.target))
        # and a receiver of both .zero_grad() and .step() (an optimizer passed in as an argument)
        methods: dict[str, set[str]] = {}
        for call in _all_calls(node):
            if isinstance(call.func, cst.Attribute) and (receiver := dotted_name(call.func.value)):
                methods.setdefault(receiver, set()).add(call.func.attr.value)
        self.optimizers.update(r for r, m in methods.items() if {"zero_grad", "step"} <= m
                               and "sched" not in r.lower() and r not in self.scalers)
        self._functions.update(f.name.value for f in all_nodes(node, cst.FunctionDef))
        self._resetting = _resetting_functions(node)
        self._function_globals = _function_globals(node)
        self._own_backward = _defines_backward_method(node)
        made = {n for a in all_nodes(node, cst.Assign) if _makes_leaf(a.value, self.scope)
                for t in a.targets for n in target_names(t.target)}
        made |= {n for a in all_nodes(node, cst.Assign) if (n := _leaf_flag(a)) is not None}
        made |= {c.func.value.value for c in _all_calls(node) if _marks_leaf(c) and isinstance(c.func.value, cst.Name)}
        self._global_leaves = made & set().union(set(), *self._function_globals.values())
        # tensors handed to an optimizer (torch.optim.SGD([w], ...)): MindSpore optimizers take Parameters
        for call in _all_calls(node):
            qual = self.scope.resolve_torch(call.func) or ""
            if qual.startswith("torch.optim.") and ".lr_scheduler." not in qual and call.args:
                self._optimized.update(_names([call.args[0].value]).reads)
                if isinstance(call.args[0].value, (cst.List, cst.Tuple)):
                    self._optimized_attrs.update(
                        d for e in call.args[0].value.elements if isinstance(e, cst.Element)
                        and isinstance(e.value, cst.Attribute) and (d := dotted_name(e.value) or "").startswith("self."))
        # ... also through a list named first (params = [W1, b1, W2, b2]; torch.optim.SGD(params, lr=1.0))
        lists = [(names, a.value) for a in all_nodes(node, cst.Assign)
                 if isinstance(a.value, (cst.List, cst.Tuple))
                 and (names := {n for t in a.targets for n in target_names(t.target)})]
        grown = True
        while grown:
            grown = False
            for names, value in lists:
                if names & self._optimized and not (elements := set(_names([value]).reads)) <= self._optimized:
                    self._optimized |= elements
                    grown = True

    def _group_item(self, target) -> tuple[cst.BaseExpression, str] | None:
        """``g['lr']`` (g a loop target over ``X.param_groups``) or ``X.param_groups[i]['lr']``: the group and key."""
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1 \
                or not isinstance(target.slice[0].slice, cst.Index) \
                or not isinstance(target.slice[0].slice.value, cst.SimpleString):
            return None
        group = target.value
        if self._is_group(group):
            return group, code_of(target.slice[0].slice.value)
        return None

    def _is_group(self, group) -> bool:
        """``g`` (a loop target over ``X.param_groups``) or ``X.param_groups[i]``: one of an optimizer's groups."""
        return isinstance(group, cst.Name) and group.value in self._group_names or isinstance(group, cst.Subscript) \
            and isinstance(group.value, cst.Attribute) and group.value.attr.value == "param_groups"

    def _set_group(self, updated_target, value: str):
        """``group[key] = value`` -> ``mindport.runtime.optim.set_group(group, key, value)``: a group's lr Parameter
        is written in place, so a MindSpore scheduler stepping it afterwards is not cut off (see set_group)."""
        self.ctx.converted_sites += 1
        optim = self.ctx.alias_for("mindport.runtime.optim")
        key = code_of(updated_target.slice[0].slice.value)
        return cst.Expr(parse_expression(f"{optim}.set_group({code_of(updated_target.value)}, {key}, {value})"))

    def leave_Assign(self, original_node, updated_node):
        """A requires_grad tensor an optimizer updates becomes a Parameter (named after it, as MindSpore's optimizers
        want); the rule differentiates it as one of the optimizer's parameters. ``g['lr'] = v`` on an optimizer's
        param group writes the group's Parameter in place (``_set_group``)."""
        if len(original_node.targets) == 1 and self._group_item(original_node.targets[0].target) is not None \
                and isinstance(updated_node.targets[0].target, cst.Subscript):
            return self._set_group(updated_node.targets[0].target, code_of(updated_node.value))
        if self._optimized_attrs and (made := self._attribute_leaf(original_node, updated_node)) is not None:
            return made
        names = [n for t in original_node.targets for n in target_names(t.target)]
        if id(original_node) in self._leaf_flags and (flag := _leaf_flag(original_node)) in self._global_leaves:
            self.ctx.converted_sites += 1  # w.requires_grad = True on a leaf a function reads: w a Parameter
            ms = self.ctx.alias_for("mindspore")
            return cst.Assign(targets=[cst.AssignTarget(cst.Name(flag))],
                              value=parse_expression(f"{ms}.Parameter({flag}, name={flag!r})"))
        if len(names) != 1 or names[0] not in self._optimized | self._global_leaves \
                or not _makes_leaf(original_node.value, self.scope):
            return updated_node
        self.ctx.converted_sites += 1
        ms = self.ctx.alias_for("mindspore")
        return updated_node.with_changes(value=parse_expression(
            f"{ms}.Parameter({code_of(updated_node.value)}, name={names[0]!r})"))

    def _attribute_leaf(self, original_node, updated_node):
        """A module's tensor made a leaf on ``self`` and handed to an optimizer (minimalRL's SAC: ``self.log_alpha =
        torch.tensor(..)``, ``self.log_alpha.requires_grad = True``, ``optim.Adam([self.log_alpha])``): a MindSpore
        optimizer takes only Parameters (MindSpore's own TypeError otherwise: "can only concatenate str (not
        "_TensorMeta") to str"), and one made from a copy would leave the attribute the loss reads unchanged. The
        attribute becomes the Parameter (``mindport.runtime.optim.leaf_parameter(self, name, value)``, held unregistered:
        torch registers none, so ``parameters()`` and the weight map leave it out as torch's do). None when the
        statement is not such a site."""
        if len(original_node.targets) != 1:
            return None
        target = original_node.targets[0].target
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad" \
                and isinstance(original_node.value, cst.Name) and original_node.value.value == "True" \
                and (owner := dotted_name(target.value)) in self._optimized_attrs:
            value, where = owner, updated_node.targets[0].target.value
        elif isinstance(target, cst.Attribute) and dotted_name(target) in self._optimized_attrs \
                and _makes_leaf(original_node.value, self.scope) and not (
                    isinstance(original_node.value, cst.Call) and (self.scope.resolve_torch(original_node.value.func)
                                                                   or "").endswith(".Parameter")):
            owner, value, where = dotted_name(target), code_of(updated_node.value), updated_node.targets[0].target
        else:
            return None
        self.ctx.converted_sites += 1
        optim = self.ctx.alias_for("mindport.runtime.optim")
        name = owner.rsplit(".", 1)[-1]
        holder = code_of(where.value) if isinstance(where, cst.Attribute) else "self"
        return cst.Expr(parse_expression(f"{optim}.leaf_parameter({holder}, {name!r}, {value})"))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope_nodes[id(self.scope)] = node  # the runner has entered the function's scope
        self._def_bodies.add(id(node.body))
        self._def_params[id(node.body)] = {p.name.value for p in (
            *node.params.posonly_params, *node.params.params, *node.params.kwonly_params)}
        self._loops.append(0)

    def leave_FunctionDef(self, original_node, updated_node):
        self._loops.pop()
        return updated_node

    def visit_Expr(self, node: cst.Expr) -> None:
        # x.requires_grad_() / x.requires_grad = True on a name: x is a leaf tensor
        call = node.value
        if isinstance(call, cst.Call) and _marks_leaf(call) and isinstance(call.func.value, cst.Name):
            self.leaves.add(call.func.value.value)  # the statement stays: the flag reads as torch's

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.iter, cst.Attribute) and node.iter.attr.value == "param_groups" \
                and isinstance(node.target, cst.Name):
            self._group_names.add(node.target.value)
        elif _pairs_param_groups(node.iter):
            # for group, factor in zip(opt.param_groups, factors) / for i, g in enumerate(opt.param_groups): the
            # targets may be groups (set_group on any other dict stores as torch does)
            self._group_names.update(target_names(node.target))
        if "param" in code_of(node.iter).lower():  # for p in model.parameters() / zip(params, grads): tensors
            self._param_vars.append(set(target_names(node.target)))
        else:
            self._param_vars.append(set())
        self._loop_targets.append(target_names(node.target))
        self._loop_bodies.add(id(node.body))
        if not self._loops[-1]:
            self._outer_loops[id(self.scope)] = node
        self._loops[-1] += 1
        calls = _own_calls(node)
        if not any(method_call(c, "backward") is not None for c in calls):
            return
        if not self._fits_native(node):
            # the general region keeps .grad: a later loop on its optimizers without zero_grad() adds to what this
            # one left there, so it must not start a fresh sum (it goes to the general region too)
            self._stepped |= {(id(self.scope), name) for c in calls if (c2 := method_call(c, "step")) is not None
                              and (name := _receiver_name(c2)) and self._is_optimizer(name)}
            return
        self._native.add(id(node))
        self._native_bodies.add(id(node.body))
        for call in calls:  # the loop rule owns these; the table must not flag them one by one
            qual = self.scope.resolve_torch(call.func) or ""
            if qual in _CLIP or qual in _AUTOCAST or (isinstance(call.func, cst.Attribute) and call.func.attr.value in (
                    "backward", "step", "zero_grad", "unscale_", "update", "scale")):
                self.ctx.handled.add(id(call))
                if qual:  # and the dotted name itself (``torch.nn.utils...`` must not be flagged piecewise)
                    _handle_subtree(self.ctx, call.func)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        # scaler.unscale_(opt) / scaler.update() outside a rewritten loop: the CPU scaler is disabled (full precision)
        call = _expr_call(original_node)
        flag = original_node.body[0] if len(original_node.body) == 1 else None
        if isinstance(flag, cst.Assign) and id(flag) in self._leaf_flags and _leaf_flag(flag) not in self._global_leaves:
            self.ctx.converted_sites += 1  # x.requires_grad = True: x is differentiated by position
            return cst.RemoveFromParent()
        if call is not None and id(call) not in self.ctx.handled and isinstance(call.func, cst.Attribute) \
                and call.func.attr.value in ("unscale_", "update") and _receiver_name(call) in self.scalers:
            self.ctx.handled.add(id(call))
            self.ctx.converted_sites += 1
            return cst.RemoveFromParent()
        return updated_node

    def visit_While(self, node: cst.While) -> None:
        self._loop_bodies.add(id(node.body))
        if not self._loops[-1]:
            self._outer_loops[id(self.scope)] = node
        self._loops[-1] += 1

    def leave_While(self, original_node, updated_node):
        self._loops[-1] -= 1
        return updated_node

    def leave_Call(self, original_node, updated_node):
        # loss.backward() outside a loop the opt(grads) rewrite takes: the general backward region's, placed when its
        # block is left (leave_IndentedBlock); .grad's readers follow torch's .grad (mindport.runtime.training)
        func = original_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "update" and self._is_group(func.value) \
                and isinstance(updated_node.func, cst.Attribute) and updated_node.func.attr.value == "update":
            # group.update(lr=v) on an optimizer's param group: each key stored as group[key] = v is (set_group)
            self.ctx.handled.add(id(original_node))
            self.ctx.converted_sites += 1
            optim = self.ctx.alias_for("mindport.runtime.optim")
            return cst.Call(func=parse_expression(f"{optim}.update_group"),
                            args=[cst.Arg(updated_node.func.value), *updated_node.args])
        if id(original_node) in self.ctx.handled:
            return updated_node
        gradient_api = self._gradient_api(original_node, updated_node)
        if gradient_api is not None:
            self.ctx.handled.add(id(original_node))
            _handle_subtree(self.ctx, original_node.func)
            self.ctx.converted_sites += 1
            return gradient_api
        if (self.scope.resolve_torch(func) or "") == "torch.autograd.grad":
            self.ctx.handled.add(id(original_node))
            _handle_subtree(self.ctx, func)
            if _creates_graph(original_node):
                self._graph_calls[id(updated_node)] = original_node
                return updated_node
            self._sites[id(updated_node)] = original_node
            self._grad_calls.add(id(updated_node))
            return updated_node
        if id(original_node) in self._leaf_calls:  # x.requires_grad_() making a leaf: differentiated by position
            return updated_node.func.value        # (a MindSpore tensor with the flag refuses in-place updates)
        if not isinstance(func, cst.Attribute) \
                or func.attr.value != "backward" or self.scope.resolve(func.value) is not None \
                or receiver_kind(func.value, self.scope) in ("object", "engine", "instance"):
            return updated_node  # "engine": c = a * b; c.backward() on Values of the project's own autograd engine
        if receiver_kind(func.value, self.scope) == "foreign":
            # made by a third-party library's call: its backward() is left as written, and said (a torch tensor's
            # would fail on MindSpore; another library's own backward() is its own)
            self.ctx.handled.add(id(original_node))
            self.flag(original_node, "MP105", f"{code_of(func.value)}.backward(): {code_of(func.value)} is made by a "
                      "third-party library, left as written (a torch tensor it returns has no backward() in "
                      "MindSpore)", _MP105_HINT)
            return updated_node
        if self._own_backward and original_node.args and receiver_kind(func.value, self.scope) != "tensor":
            return updated_node  # flow.backward(z): the inverse pass a class of the file defines, not Tensor.backward
        self.ctx.handled.add(id(original_node))
        self._sites[id(updated_node)] = original_node
        return updated_node

    def _gradient_api(self, original: cst.Call, updated: cst.Call):
        """torch's gradient API outside a rewritten loop, on .grad: step, zero_grad, clipping, AMP's scaler and
        autocast (disabled, full precision as torch without CUDA)."""
        qual = self.scope.resolve_torch(original.func) or ""
        args = ", ".join(code_of(a.value) if a.keyword is None and not a.star else
                         code_of(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in updated.args)
        if qual in _CLIP:
            name = "clip_grad_norm_" if _CLIP[qual] == "norm" else "clip_grad_value_"
            return updated.with_changes(func=parse_expression(
                f"{self.ctx.alias_for('mindport.runtime.training')}.{name}"))
        if not isinstance(original.func, cst.Attribute):
            return None
        method, receiver = original.func.attr.value, dotted_name(original.func.value)
        if receiver is None or self.scope.resolve_dotted(receiver) is not None:
            return None
        train = lambda: self.ctx.alias_for("mindport.runtime.training")  # noqa: E731
        if method == "zero_grad":
            return parse_expression(f"{train()}.zero_grad({', '.join([receiver, *(code_of(a) for a in updated.args)])})")
        if method == "get_scale" and receiver in self.scalers and not updated.args:
            return parse_expression(f"float({receiver}.scale_value)")  # torch's Python float (1.0 when disabled)
        if method == "step" and receiver in self.scalers and len(updated.args) >= 1:
            opt = code_of(updated.args[0].value)
            return parse_expression(f"{opt}({train()}.grads_of({opt}))")
        if method == "step" and self._is_optimizer(receiver):
            if not updated.args:
                return parse_expression(f"{receiver}({train()}.grads_of({receiver}))")
            return parse_expression(f"{train()}.step({receiver}, {args})")
        if method == "get_last_lr" and not updated.args \
                and (receiver in self.schedulers or named_like_scheduler(receiver)):
            # torch's Python floats, where MindSpore's schedulers give 0-d Tensors
            return parse_expression(f"{self.ctx.alias_for('mindport.runtime.optim')}.get_last_lr({receiver})")
        if ((method == "state_dict" and not updated.args) or (method == "load_state_dict" and len(updated.args) == 1)) \
                and (self._is_optimizer(receiver) or named_like_scheduler(receiver)):
            # torch's {'state', 'param_groups'}, a scheduler's attributes (decided on the receiver's type)
            return parse_expression(f"{self.ctx.alias_for('mindport.runtime.optim')}.{method}"
                                    f"({', '.join([receiver, *([args] if args else [])])})")
        return None

    def _is_optimizer(self, receiver: str) -> bool:
        return receiver in self.optimizers or named_like_optimizer(receiver)

    def _fits_native(self, loop: cst.For) -> bool:
        """Does the opt(grads) rewrite take this loop? Tried on the original loop, before its statements are
        converted, so that a loop it does not take is left whole to the general backward region."""
        if any((self.scope.resolve_torch(c.func) or "") == "torch.autograd.grad" and _creates_graph(c)
               for c in _own_calls(loop)):
            return False  # its gradients are a function defined in the body: the general region takes the loop
        if _reads_grad(loop.body):
            return False  # p.grad read in the step (gradient norms before clipping): the general region fills .grad
        outer = self._outer_loops.get(id(self.scope))
        if outer is not None and outer is not loop and _reads_grad(outer.body):
            return False  # ... or after the batches, in the epoch loop (the last batch's gradients logged per epoch)
        own = self._loop_targets.pop()
        stepped, never = set(self._stepped), set(self._never_reset)
        try:
            targets = [n for level in self._loop_targets for n in level] + own
            resets = any(method_call(c, "zero_grad") is not None for c in _own_calls(loop))
            self._loop_original = loop
            self._rewrite(loop, targets, resets)
            return True
        except _Unfit:
            return False
        finally:
            self._loop_targets.append(own)
            self._stepped, self._never_reset = stepped, never

    def leave_For(self, original_node: cst.For, updated_node: cst.For):
        self._param_vars.pop()
        self._loops[-1] -= 1
        targets = [n for level in self._loop_targets for n in level]
        self._loop_targets.pop()
        if id(original_node) not in self._native:
            return self._parameter_grads_once(updated_node)
        try:
            resets = any(method_call(c, "zero_grad") is not None for c in _own_calls(original_node))
            self._loop_original = original_node
            new_loop, prelude = self._rewrite(updated_node, targets, resets)
        except _Unfit as exc:
            self.flag(original_node, "MP105", f"training loop not recognised: {exc}", _MP105_HINT)
            return updated_node
        self.ctx.converted_sites += 1
        self._preludes.append((new_loop, prelude))
        hoisted = self._hoisted.setdefault(id(self.scope), set())
        for stmt in prelude:
            if isinstance(stmt, cst.FunctionDef):
                hoisted.add(stmt.name.value)
            elif isinstance(stmt, cst.SimpleStatementLine):
                hoisted.update(t.target.value for a in stmt.body if isinstance(a, cst.Assign)
                               for t in a.targets if isinstance(t.target, cst.Name))
        return new_loop

    # --- placing forward_fn / grad_fn before the outermost loop of the nest
    def leave_IndentedBlock(self, original_node, updated_node):
        if self._graph_calls:
            updated_node = updated_node.with_changes(body=self._graph_sites(list(updated_node.body)))
        if self._sites and id(original_node) not in self._native_bodies:
            terminal = id(original_node) in self._loop_bodies or id(original_node) in self._def_bodies
            updated_node = updated_node.with_changes(body=self._regions(
                list(updated_node.body), terminal, self._def_params.get(id(original_node)),
                self._enclosing_params(original_node)))
        if not self._preludes:
            return updated_node
        if id(original_node) in self._loop_bodies:  # an outer loop: only a prelude reading what its body binds
            return updated_node.with_changes(body=self._place(list(updated_node.body), bound_here=True))
        return updated_node.with_changes(body=self._place(list(updated_node.body)))

    def leave_Module(self, original_node, updated_node):
        if self._graph_calls:
            updated_node = updated_node.with_changes(body=self._graph_sites(list(updated_node.body)))
            for call in self._graph_calls.values():  # in an expression no block statement holds (a lambda)
                self.flag(call, "MP105", "torch.autograd.grad(create_graph=True) not followed: it stands where no "
                          "statement of a block holds it", _MP105_HINT, "torch.autograd.grad")
            self._graph_calls.clear()
        if self._sites:
            updated_node = updated_node.with_changes(body=self._regions(list(updated_node.body), True))
        if not self._preludes:
            return updated_node
        return updated_node.with_changes(body=self._place(list(updated_node.body)))

    # --- the general backward region (training_region.py)
    def _parameter_grads_once(self, loop: cst.For):
        """A loop over a model's parameters taking the gradient of a loss handed in for each
        (``for name, p in net.named_parameters(): p.grad = torch.autograd.grad(loss, p, retain_graph=True)[0]``),
        written by ``_handed_losses`` as forward_fn, value_and_grad for ``p`` and the call in the loop body: the
        differentiation is moved before the loop, for every parameter the loop visits, and the body keeps reading its
        parameter's gradient (``grads_for(grads, p)``): one forward and one backward, not one per parameter, as
        torch's saved graph serves every ``autograd.grad`` (sgould/fun_and_games' REINFORCE: four per step). Only when
        the rest of the body is plain assignments (the gradient, ``p.grad = g``), nothing that changes a parameter
        before a later gradient is taken; otherwise the loop stays as written."""
        body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
        if len(body) < 4 or not isinstance(body[0], cst.FunctionDef) or not self._handed_copies:
            return loop
        first = body[0].body.body[0] if isinstance(body[0].body, cst.IndentedBlock) and body[0].body.body else None
        copied = first.body[0].targets[0].target if isinstance(first, cst.SimpleStatementLine) \
            and isinstance(first.body[0], cst.Assign) and len(first.body[0].targets) == 1 else None
        if not isinstance(copied, cst.Name) or copied.value not in self._handed_copies:
            return loop
        grad_line = body[1].body[0] if isinstance(body[1], cst.SimpleStatementLine) else None
        call = grad_line.value if isinstance(grad_line, cst.Assign) else None
        weights = call.args[1].value if isinstance(call, cst.Call) and len(call.args) == 2 else None
        param = weights.args[0].value if isinstance(weights, cst.Call) and len(weights.args) == 1 else None
        iterated = loop.iter
        owner_call = isinstance(iterated, cst.Call) and (dotted_name(iterated.func) or "").rsplit(".", 1)[-1] in (
            "parameters", "named_parameters", "trainable_params", "get_parameters")
        names = set(target_names(loop.target))
        if not (isinstance(param, cst.Name) and param.value in names and owner_call and not _all_calls(loop.target)):
            return loop
        for stmt in body[3:]:  # plain assignments: nothing that changes a parameter between two gradients
            if not isinstance(stmt, cst.SimpleStatementLine) or not all(isinstance(b, cst.Assign) for b in stmt.body):
                return loop
            for small in stmt.body:
                for t in small.targets:
                    if not (isinstance(t.target, cst.Name) or isinstance(t.target, cst.Attribute)
                            and t.target.attr.value == "grad"):
                        return loop
                if any(dotted_name(c.func) and dotted_name(c.func).rsplit(".", 1)[-1] != "grads_for"
                       for c in _all_calls(small.value)):
                    return loop
        hoisted_grad = body[1].with_changes(body=[grad_line.with_changes(value=call.with_changes(args=[
            call.args[0], call.args[1].with_changes(value=weights.with_changes(args=[cst.Arg(iterated)]))]))])
        self.ctx.converted_sites += 1
        new_loop = loop.with_changes(body=loop.body.with_changes(body=body[3:]), leading_lines=[])
        return cst.FlattenSentinel([body[0].with_changes(leading_lines=loop.leading_lines), hoisted_grad, body[2],
                                    new_loop])

    def _enclosing_params(self, block) -> set[str] | None:
        """The parameters of the function whose loop body ``block`` is (not its own body: that one's are
        ``_def_params``) that the function never rebinds: a loss handed in may be differentiated in a loop over the
        parameters (``for p in net.parameters(): p.grad = torch.autograd.grad(loss, p, retain_graph=True)[0]``)."""
        node = self._scope_nodes.get(id(self.scope))
        if not isinstance(node, cst.FunctionDef) or id(block) == id(node.body) or id(block) not in self._loop_bodies:
            return None
        written = set().union(*(reads_writes(stmt)[1] for stmt in node.body.body))
        return self._def_params.get(id(node.body), set()) - written

    def _regions(self, body: list, terminal: bool, params: set[str] | None = None,
                 enclosing: set[str] | None = None) -> list:
        """The backward sites of one block: their forward statements become forward_fn, differentiated where the
        last of them stood; each backward adds the gradients into .grad. A site whose loss this block does not
        compute waits for the enclosing block (it stands in an if/with/try), or, in a loop or function body or the
        module, gets MP105."""
        calls = [(index, call) for index, stmt in enumerate(body) for call in _backward_calls(stmt, self._grad_calls)
                 if id(call) in self._sites]
        if not calls:
            return body
        original = body
        if params:
            body, calls = self._handed_losses(body, calls, params)
        elif enclosing:
            body, calls = self._handed_losses(body, calls, enclosing, grads_only=True)
        try:
            sites = [self._site(index, call, body) for index, call in calls]
            try:
                plans = plan_block(body, sites, self._forward_names(body), self.leaves, self._read_elsewhere,
                                   self._own_methods())
            except Unfit as exc:  # two losses computed in one tuple assignment: one statement each, then again
                if "differentiated again" not in str(exc) or (parallel := split_parallel(body)) is None:
                    raise
                body = parallel
                calls = [(index, call) for index, stmt in enumerate(body)
                         for call in _backward_calls(stmt, self._grad_calls) if id(call) in self._sites]
                sites = [self._site(index, call, body) for index, call in calls]
                plans = plan_block(body, sites, self._forward_names(body), self.leaves, self._read_elsewhere,
                                   self._own_methods())
            if (drawn := self._draw_once(body, plans)) is not None or \
                    (drawn := self._name_bare_losses(body, [p.site for p in plans if p.reuse is None])) is not None:
                body = drawn
                calls = [(index, call) for index, stmt in enumerate(body)
                         for call in _backward_calls(stmt, self._grad_calls) if id(call) in self._sites]
                sites = [self._site(index, call, body) for index, call in calls]
                plans = plan_block(body, sites, self._forward_names(body), self.leaves, self._read_elsewhere,
                                   self._own_methods())
        except Unfit as exc:
            if not terminal and "is not computed in this block" in str(exc):
                return original  # the enclosing block may compute it
            if "nothing before .backward() computes" in str(exc) and body is original \
                    and (named := self._name_bare_losses(body, sites)) is not None:
                # the loss computed by the backward's own expression where nothing before it in the block reads
                # what it reads (``((model(x) - y) ** 2).mean().backward()`` in a loop over the data its module
                # holds): named as a statement of its own, the block is planned again
                return self._regions(named, terminal, params, enclosing)
            for _, call in calls:
                self.flag(self._sites.pop(id(call)), "MP105", f"training step not recognised: {exc}", _MP105_HINT,
                          "torch.Tensor.backward")
            return original
        for _, call in calls:
            self._sites.pop(id(call))
        self.ctx.converted_sites += len(plans)
        return self._emit(body, plans)

    def _draw_once(self, body: list, plans: list[Plan]) -> list | None:
        """A forward statement that two backward sites' forward_fn both compute (a GAN step's
        ``gen_batch = g(torch.randn(...))``, read by the discriminator's loss and the generator's): torch drew its
        random values once, each forward_fn would draw them again. Its draws (``ops.randn(...)`` in an argument)
        become statements of their own before it, so both compute from the same values, as a separate
        ``noise = torch.randn(...)`` line does. None when no such statement draws."""
        counts = Counter(i for plan in plans if plan.reuse is None for i in dict.fromkeys(plan.forward))
        forward_names = self._forward_names(body)
        taken = set(_names(body).reads) | set(_names(body).writes) | set(_assigned_names(body))
        changed = False
        for index in sorted((i for i, n in counts.items() if n > 1), reverse=True):
            stmt = body[index]
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
                    or not isinstance(stmt.body[0], cst.Assign):
                continue
            draws = [c for c in _all_calls(stmt.body[0].value) if c is not stmt.body[0].value
                     and (name := dotted_name(c.func)) and name.rsplit(".", 1)[-1] in RANDOM_DRAWS
                     and name.split(".", 1)[0] not in forward_names | {"self"}]
            draws = [c for c in draws if not any(c is not o and _contains(o, c) for o in draws)]  # outermost
            if not draws:
                continue
            names = {}
            for call in draws:
                names[id(call)] = self._fresh_in("draw", taken)
                taken.add(names[id(call)])
            lines = [parse_statement(f"{names[id(c)]} = {code_of(c)}\n") for c in draws]
            lines[0] = lines[0].with_changes(leading_lines=stmt.leading_lines)
            new = _replace_sites(stmt, {id(c): cst.Name(names[id(c)]) for c in draws}, {})
            body = [*body[:index], *lines, new.with_changes(leading_lines=[]), *body[index + 1:]]
            changed = True
        return body if changed else None

    def _name_bare_losses(self, body: list, sites: list) -> list | None:
        """A backward called on an expression that computes the loss itself by calling a model or loss of the file,
        standing alone (``criterion(model(x), y).backward()`` after a training loop, at module level): no statement
        before it computes the loss, so the plan took the statements binding what it reads (the model's construction
        or its weights' initialisation went into forward_fn, hoisted above the optimizer it differentiates for). The
        loss becomes a statement of its own, ``loss_ = criterion(model(x), y)``, then ``loss_.backward()``, the
        shape a named loss has. Also where the plan found nothing before such a backward in its block (``((model(x)
        - y) ** 2).mean().backward()`` in a loop holding only ``opt.zero_grad()`` before it: MP105 "nothing before
        .backward() computes"). None when no site is such."""
        forward_names = self._forward_names(body)
        taken = set(_names(body).reads) | set(_names(body).writes) | set(_assigned_names(body))
        changed = False
        for site in sorted(sites, key=lambda s: s.index, reverse=True):
            stmt = body[site.index]
            if site.loss is not None or not set(_names([site.differentiated]).reads) \
                    & forward_names or _expr_call(stmt) is not site.call or method_call(site.call, "backward") is None:
                continue
            name = self._fresh_in("loss_", taken)
            taken.add(name)
            line = parse_statement(f"{name} = {code_of(site.call.func.value)}\n")
            call = site.call.with_changes(func=site.call.func.with_changes(value=cst.Name(name)))
            self._sites[id(call)] = self._sites.pop(id(site.call))
            body = [*body[:site.index], line.with_changes(leading_lines=stmt.leading_lines),
                    stmt.with_changes(body=[cst.Expr(call)], leading_lines=[]), *body[site.index + 1:]]
            changed = True
        return body if changed else None

    def _handed_losses(self, body: list, calls: list, params: set[str], grads_only: bool = False) \
            -> tuple[list, list]:
        """A function's ``loss.backward()`` of its parameter ``loss`` that its body never rebinds (an update helper
        handed the loss by its caller, ``project.backward_params``): the body starts with ``loss = loss``, the
        statement that computes it here, so the region's forward_fn returns the value handed over. Its caller
        records that value with the statements that computed it (``RecordedValueTransform``) and the runtime's
        value_and_grad computes it again inside the differentiation; a value nobody recorded reaches no parameter
        and the runtime refuses it at the first step (``_UNREACHED``), never a silent zero gradient. Before, MP105
        left ``loss.backward()`` to torch (ohgreat's REINFORCE and actor-critic agents). The same for
        ``torch.autograd.grad(loss, ...)`` of such a parameter, in the function's body or in a loop of it
        (``grads_only``: a helper setting ``p.grad`` parameter by parameter, sgould/fun_and_games' REINFORCE), which
        had stayed torch's call (MP105)."""
        written = set().union(*(reads_writes(stmt)[1] for stmt in body))
        handed = []
        for _, call in calls:
            if id(call) in self._grad_calls:
                outputs = _autograd_args(call).get("outputs")
                name = outputs.value if isinstance(outputs, cst.Name) else None
            else:
                func = call.func
                name = func.value.value if not grads_only and isinstance(func, cst.Attribute) \
                    and isinstance(func.value, cst.Name) else None
            if name is not None and name in params and name not in written and name not in handed:
                handed.append(name)
        if not handed:
            return body, calls
        if grads_only:
            # in a loop the handed loss is differentiated once per pass: the region's ``loss, grads = grad_fn(loss)``
            # would rebind it to the value computed inside the first differentiation, which the next pass cannot
            # differentiate again ("Try to backward the graph twice"); the grad reads a copy of the name instead
            taken = set(_names(body).reads) | set(_names(body).writes) | set(_assigned_names(body))
            renamed = {}
            for name in handed:
                renamed[name] = self._fresh_in(f"{name}_", taken)
                taken.add(renamed[name])
                self._handed_copies.add(renamed[name])
            for k, (index, call) in enumerate(calls):
                outputs = _autograd_args(call).get("outputs") if id(call) in self._grad_calls else None
                if not isinstance(outputs, cst.Name) or outputs.value not in renamed:
                    continue
                new_call = call.with_changes(args=[a.with_changes(value=cst.Name(renamed[outputs.value]))
                                                   if a.value is outputs else a for a in call.args])
                self._sites[id(new_call)] = self._sites.pop(id(call))
                self._grad_calls.add(id(new_call))
                body = [*body[:index], _replace_sites(body[index], {id(call): new_call}, {}), *body[index + 1:]]
                calls[k] = (index, new_call)
            lines = [parse_statement(f"{renamed[name]} = {name}\n") for name in handed]
        else:
            lines = [parse_statement(f"{name} = {name}\n") for name in handed]
        return lines + body, [(index + len(handed), call) for index, call in calls]

    def _site(self, index: int, call: cst.Call, body: list | None = None):
        if id(call) in self._grad_calls:  # torch.autograd.grad(outputs, inputs, grad_outputs, ...)
            args = _autograd_args(call)
            if "outputs" not in args or "inputs" not in args or isinstance(args["outputs"], (cst.List, cst.Tuple)):
                raise Unfit("torch.autograd.grad of several outputs is not followed")
            expr = args["outputs"]
            if "grad_outputs" in args and code_of(args["grad_outputs"]).strip() != "None":
                expr = parse_expression(f"(({code_of(expr)}) * ({code_of(args['grad_outputs'])})).sum()")
            call_args = {k: v for k, v in args.items() if k not in ("outputs", "grad_outputs")}
            if "is_grads_batched" in call_args and code_of(call_args["is_grads_batched"]).strip() not in (
                    "False", "None"):
                raise Unfit("torch.autograd.grad(is_grads_batched=True) is not followed")
            loss = expr.value if isinstance(expr, cst.Name) else None
            return Site(index, call, expr, loss)
        expr = call.func.value
        args = {a.keyword.value if a.keyword else ("gradient" if i == 0 else "?"): a.value
                for i, a in enumerate(call.args)}
        if "?" in args:
            raise Unfit(".backward(...) with retain_graph/create_graph/inputs given by position is not followed")
        if "create_graph" in args and code_of(args["create_graph"]).strip() not in ("False", "None"):
            raise Unfit(".backward(create_graph=True) (higher-order gradients) is not followed")
        if "gradient" in args and code_of(args["gradient"]).strip() != "None":
            expr = parse_expression(f"(({code_of(expr)}) * ({code_of(args['gradient'])})).sum()")
        if (scaled := method_call(expr, "scale")) is not None and _receiver_name(scaled) in self.scalers \
                and len(scaled.args) == 1:
            expr = scaled.args[0].value  # scaler.scale(loss).backward(): full precision, nothing to scale
        elif isinstance(expr, cst.Name) and body is not None and (wrapped := self._apex_scaled(
                body[index], call, expr.value)) is not None:
            expr = wrapped  # with amp.scale_loss(loss, opt) as scaled_loss: scaled_loss.backward(): loss's own
        loss = expr.value if isinstance(expr, cst.Name) else None
        if loss is None and isinstance(expr, cst.BinaryOperation) and isinstance(expr.left, cst.Name):
            loss = expr.left.value  # (loss / accum_steps).backward()
        return Site(index, call, expr, loss, args.get("inputs"))

    def _apex_scaled(self, stmt, call: cst.Call, name: str) -> cst.BaseExpression | None:
        """The loss an apex ``with amp.scale_loss(loss, optimizer) as scaled_loss:`` item wraps, when ``name`` is that
        item's target and the backward call stands in its body (kekmodel/FixMatch-pytorch's ``if args.amp:`` step).
        apex scales for CUDA only and unscales before the optimizer steps, so ``scaled_loss.backward()`` is
        ``loss.backward()`` (as ``scaler.scale(loss)`` on the CPU); read as a value the block does not compute, the
        whole loop had been left to torch (MP105). The item is apex's (``apex.amp.scale_loss``) or already its
        mapping (``mindport.runtime.ecosystem.amp_scale_loss``, packages.toml); the loss is its first argument."""
        mapped = f"{runtime_alias('mindport.runtime.ecosystem')}.amp_scale_loss"
        for with_node in [stmt] + all_nodes(stmt, cst.With):
            if not isinstance(with_node, cst.With) or not any(c is call for c in all_nodes(with_node.body, cst.Call)):
                continue
            for item in with_node.items:
                value = item.item
                if item.asname is None or not isinstance(item.asname.name, cst.Name) \
                        or item.asname.name.value != name or not isinstance(value, cst.Call) \
                        or (self.scope.resolve(value.func) != "apex.amp.scale_loss"
                            and dotted_name(value.func) != mapped):
                    continue
                loss = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "loss"),
                            None) or next((a.value for a in value.args if a.keyword is None and not a.star), None)
                return loss
        return None

    # --- torch.autograd.grad(..., create_graph=True): a function of its inputs, differentiated where it stands
    def _graph_sites(self, body: list) -> list:
        """Each ``torch.autograd.grad(outputs, inputs, create_graph=True)`` of the block: the statements before it that
        compute ``outputs`` from ``inputs`` become ``fn(*inputs)``, defined where the call stands, and the call
        ``mindport.runtime.training.grad_graph(fn, inputs, ...)`` (``mindspore.vjp``), whose gradients a later
        ``backward`` differentiates again, as torch's graph would."""
        while True:
            found = next(((i, c) for i, stmt in enumerate(body) for c in _backward_calls(stmt, self._graph_calls)
                          if id(c) in self._graph_calls), None)
            if found is None:
                return body
            index, call = found
            original = self._graph_calls.pop(id(call))
            try:
                body = self._graph_site(body, index, call)
                self.ctx.converted_sites += 1
            except Unfit as exc:
                self.flag(original, "MP105", f"torch.autograd.grad(create_graph=True) not followed: {exc}",
                          _MP105_HINT, "torch.autograd.grad")

    def _graph_site(self, body: list, index: int, call: cst.Call) -> list:
        args = _autograd_args(call)
        outputs, inputs = args.get("outputs"), args.get("inputs")
        if outputs is None or inputs is None or "?" in args:
            raise Unfit("its arguments are not outputs, inputs and keywords")
        if isinstance(outputs, (cst.List, cst.Tuple)):
            raise Unfit("several outputs")
        if "is_grads_batched" in args and code_of(args["is_grads_batched"]).strip() not in ("False", "None"):
            raise Unfit("is_grads_batched=True")
        mapping = _values_of(inputs)  # MAML's fast weights: grad(loss, fast_weights.values(), create_graph=True)
        elements = [cst.Name(mapping)] if mapping else \
            [e.value for e in inputs.elements] if isinstance(inputs, (cst.List, cst.Tuple)) else [inputs]
        if not all(isinstance(e, cst.Name) for e in elements):
            raise Unfit(f"the inputs {code_of(inputs)} are not tensors named in the code (gradients with respect to "
                        "a model's parameters, as a Hessian-vector product over the weights takes, are not "
                        "followed)")
        names = [e.value for e in elements]
        rw = [reads_writes(stmt) for stmt in body]
        needed = set(_names([outputs]).reads) - set(names)
        chosen: list[int] = []
        for i in range(index - 1, -1, -1):
            reads, writes = rw[i]
            if writes & needed:
                # a definition is taken with the statements (an earlier site's fn: u_x after u_t of the same u, u_xx)
                if not isinstance(body[i], (cst.SimpleStatementLine, cst.FunctionDef)):
                    raise Unfit(f"{', '.join(sorted(writes & needed))} is computed in a compound statement")
                chosen.append(i)
                needed = (needed - writes) | (reads - set(names))
        depends = set(names)
        inner: list[int] = []
        for i in reversed(chosen):
            if rw[i][0] & depends:
                inner.append(i)
                depends |= rw[i][1]
        if not set(_names([outputs]).reads) & depends:
            raise Unfit(f"{code_of(outputs)} does not depend on {code_of(inputs)} in this block")
        made = set().union(set(), *(rw[i][1] for i in inner))
        inner_reads = set().union(set(), *(rw[i][0] for i in inner))
        later: list[int] = []  # lines among them reading only their results (dudt = grads_u[0]): after the call
        for i in range(inner[0] if inner else index, index):
            if i in inner or not (rw[i][0] & made or rw[i][1] & (inner_reads | made)):
                continue
            between = [j for j in range(i + 1, index) if j not in inner]
            if rw[i][1] & (inner_reads | made) or any(rw[j][0] & rw[i][1] or rw[j][1] & rw[i][0] for j in between):
                raise Unfit(f"line {code_of(body[i]).strip()!r} stands among the statements computing "
                            f"{code_of(outputs)} and reads or changes what they use")
            later.append(i)
        grad_outputs = args.get("grad_outputs")
        if grad_outputs is not None and code_of(grad_outputs).strip() == "None":
            grad_outputs = None
        stmts = [body[i] for i in inner]
        output_name = outputs.value if isinstance(outputs, cst.Name) else None
        scope_node = self._scope_nodes.get(id(self.scope))
        total = Counter(_names([scope_node]).reads) if scope_node is not None else Counter()
        here = Counter(_names([*stmts, outputs, *([grad_outputs] if grad_outputs is not None else [])]).reads)
        # read elsewhere: in the function as written, or (a name an earlier site made) by the block's other lines
        others = Counter(_names([s for i, s in enumerate(body) if i not in inner and i != index]).reads)
        elsewhere = {n for n in made if total[n] > here[n] or others[n] or scope_node is None}
        lazy = grad_outputs is not None and bool(set(_names([grad_outputs]).reads) & made)
        kept = [n for n in dict.fromkeys(_assigned_names(stmts)) if n != output_name and (
            n in elsewhere or lazy and n in _names([grad_outputs]).reads)]
        keep_output = output_name is not None and output_name in elsewhere
        train = self.ctx.alias_for("mindport.runtime.training")
        in_block = set(_names(body).reads) | set(_names(body).writes) | set(_assigned_names(body))
        fn = self._fresh_in(f"{output_name or 'outputs'}_fn", in_block)
        returned = ", ".join([code_of(outputs), *kept])
        first = stmts[0] if stmts else body[index]
        definition = cst.FunctionDef(
            name=cst.Name(fn), params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in names]),
            body=cst.IndentedBlock(body=[*(s.with_changes(leading_lines=[]) for s in stmts),
                                         parse_statement(f"return {returned}\n")]),
            leading_lines=first.leading_lines)
        extra = ""
        if grad_outputs is not None:
            params = ", ".join([output_name or "_outputs", *kept])
            extra += f", grad_outputs=lambda {params}: {code_of(grad_outputs)}" if lazy else \
                f", grad_outputs={code_of(grad_outputs)}"
        if "allow_unused" in args:
            extra += f", allow_unused={code_of(args['allow_unused'])}"
        with_kept = bool(kept or keep_output)
        over = f"grad_graph_values({fn}, {mapping}" if mapping else f"grad_graph({fn}, ({', '.join(names)},)"
        value = parse_expression(f"{train}.{over}{extra}{', kept=True' if with_kept else ''})")
        new = [definition]
        if with_kept:
            grads = self._fresh_in(f"grads_{output_name or 'outputs'}", in_block)
            targets = ", ".join([grads, output_name if keep_output else "_", *kept])
            new.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(parse_expression(targets))],
                                                                value=value)]))
            value = cst.Name(grads)
        site = _replace_sites(body[index], {id(call): value}, {})
        if not stmts:
            site = site.with_changes(leading_lines=[])
        new += [body[i] for i in later]
        return [s for i, s in enumerate(body[:index]) if i not in inner and i not in later] + new + [site] + \
            body[index + 1:]

    def _forward_names(self, body: list) -> set[str]:
        """Names whose reading makes a statement part of the forward: callables of the file (models, losses,
        helpers) called as name(...) in the scope, models whose parameters the file hands out, and self."""
        scope_node = self._scope_nodes.get(id(self.scope))
        found = {"self"}
        for node in [scope_node] if scope_node is not None else body:
            for call in _all_calls(node):
                name = dotted_name(call.func)
                if isinstance(call.func, cst.Name) and name and not self._library_call(call.func) \
                        and name not in _BUILTINS:
                    found.add(name)
                elif isinstance(call.func, cst.Attribute) and call.func.attr.value in ("forward", "construct") \
                        and isinstance(call.func.value, cst.Name) and not self._library_call(call.func.value):
                    found.add(call.func.value.value)  # model.forward(src, tgt): the model called by its method
        # a model whose parameters the file hands out (an optimizer's model.parameters()): reading it is forward too,
        # so model.forward_input(words) / model.encode(x) feeding the loss is differentiated, not a constant
        found |= {name for name in self._owners if "." not in name}
        return found

    def _read_elsewhere(self, name: str, forward_stmts) -> bool:
        scope_node = self._scope_nodes.get(id(self.scope))
        if scope_node is None:
            return True
        return _names([scope_node]).reads.count(name) > sum(_names([s]).reads.count(name) for s in forward_stmts)

    def _emit(self, body: list, plans: list[Plan]) -> list:
        train = self.ctx.alias_for("mindport.runtime.training")
        many = len([p for p in plans if p.reuse is None]) > 1
        names: dict[int, tuple[str, str, str]] = {}
        for n, plan in enumerate(plans):
            if plan.reuse is not None and plan.part:  # its own loss's gradients, from the shared forward's call
                names[id(plan)] = (*names[id(plan.reuse)][:2], self._fresh(f"grads_{plan.site.loss}", None))
                continue
            if plan.reuse is not None:
                names[id(plan)] = names[id(plan.reuse)]
                continue
            tag = f"_{plan.site.loss}" if many and plan.site.loss else (f"_{n + 1}" if many else "")
            names[id(plan)] = (self._fresh(f"forward_fn{tag}", None), self._fresh(f"grad_fn{tag}", None),
                               self._fresh(f"grads{tag}", None))
        dropped = {i for p in plans for i in p.forward}
        moved = {i for p in plans for i in p.moved}
        out: list = []
        for index, stmt in enumerate(body):
            for plan in plans:
                if plan.reuse is None and plan.at == index:
                    inputs = [p.site.inputs for p in plans if (p is plan or p.reuse is plan) and p.site.inputs]
                    guard = _branch_guard(body, plan) if len(plans) == 1 else None
                    parts = [names[id(p)][2] for p in plans if p.reuse is plan and p.part]
                    out.extend(self._call(body, plan, names[id(plan)], train, inputs, guard, parts))
                    out.extend(body[i] for i in plan.moved)
            if index in dropped or index in moved:
                continue
            calls, statements = {}, {}  # every site of the statement in one pass (a pass makes new nodes: the
            for plan in plans:          # second site of an if/else was not found by identity)
                if plan.site.index == index and id(plan.site.call) in self._grad_calls:
                    calls[id(plan.site.call)] = self._grads_for(plan.site.call, names[id(plan)][2])
                elif plan.site.index == index:
                    inputs = "" if plan.site.inputs is None else f", inputs={code_of(plan.site.inputs)}"
                    statements[id(plan.site.call)] = parse_statement(
                        f"{train}.backward({names[id(plan)][2]}{inputs})\n")
            out.append(_replace_sites(stmt, calls, statements) if calls or statements else stmt)
        return out

    def _grads_for(self, call: cst.Call, grads: str) -> cst.BaseExpression:
        """torch.autograd.grad(...) -> the gradients of its inputs, picked from the region's."""
        keep = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for i, a in enumerate(call.args)
                if (a.keyword.value if a.keyword else ("outputs", "inputs")[i] if i < 2 else "?") in (
                    "inputs", "allow_unused")]
        inputs = ", ".join(code_of(a) for a in keep)
        return parse_expression(f"{self.ctx.alias_for('mindport.runtime.training')}.grads_for({grads}, {inputs})")

    def _call(self, body, plan: Plan, names, train: str, inputs=(), guard=None, parts=()) -> list:
        fn_name, grad_fn, grads = names
        stmts = [body[i] for i in plan.forward]
        site = plan.site
        differentiated = code_of(site.differentiated)
        returned = [differentiated]
        targets = [site.loss if site.loss == differentiated else "_"]
        if site.loss is not None and site.loss != differentiated:
            returned.append(site.loss)
            targets.append(site.loss)
        returned += plan.joint  # the later sites' losses, each differentiated on its own (losses=k)
        targets += plan.joint
        returned += [n for n in plan.outputs if n not in plan.joint]
        targets += [n for n in plan.outputs if n not in plan.joint]
        positional = [n for n in plan.leaves if n not in self._global_leaves]
        as_weights = [n for n in plan.leaves if n in self._global_leaves] + self._leaves_through(stmts)
        args = [*positional, *plan.params, *plan.maybe]
        # a name the forward reads where only some path assigned it (``if epoch > 0: logp = ...`` then a loss reading
        # ``logp``) is handed in as it is bound before the step, UNBOUND where it is not (read then: an error, as
        # torch's UnboundLocalError); before, it started as UNBOUND inside forward_fn and epoch 0 read no value
        call_args = [*positional, *plan.params, *(f'locals().get("{n}", {train}.UNBOUND)' for n in plan.maybe)]
        # a name handed back that the step assigns only in a branch (``if use_mixup: fake, lam = ...``) starts as
        # UNBOUND (it would be an UnboundLocalError at the return when the branch did not run), and is deleted again
        # after the call, as torch's name was never assigned in that step
        branch_only = [n for n in plan.outputs if n not in plan.params and n not in _definitely_assigned(stmts)]
        fn_body = [*(parse_statement(f"{n} = {train}.UNBOUND\n") for n in branch_only if n not in plan.maybe),
                   stmts[0].with_changes(leading_lines=[l for l in stmts[0].leading_lines if l.comment]),
                   *stmts[1:], parse_statement(f"return {', '.join(returned)}\n")]
        forward_fn = cst.FunctionDef(name=cst.Name(fn_name), params=cst.Parameters(
            params=[cst.Param(cst.Name(p)) for p in args]), body=cst.IndentedBlock(body=fn_body),
            leading_lines=[l for l in stmts[0].leading_lines if not l.comment])
        extra = []
        if inputs:  # backward(inputs=[...]) here and at the sites reusing these gradients: differentiated
            extra = [n for n in _names(list(inputs)).reads if n not in plan.leaves]
        if id(site.call) in self._grad_calls:  # the inputs torch.autograd.grad asks for are differentiated
            extra = [n for n in _names([a.value for a in site.call.args[1:2]] or
                                       [a.value for a in site.call.args if a.keyword and a.keyword.value == "inputs"]
                                       ).reads if n not in plan.leaves]
        modes = []  # once per scope and model, where the file never switches modes (see visit_Module)
        called = list(dict.fromkeys(dotted_name(c.func) for c in _all_calls(cst.Module(body=list(stmts)))))
        reached = [] if self._modes_set else self._reached_attributes(stmts)
        for name in called + [n for n in reached if n not in called]:
            if not self._modes_set and name in self._owners and (id(self.scope), name) not in self._moded:
                self._moded.add((id(self.scope), name))
                modes.append(parse_statement(f"{name}.set_train(True)\n"))
            elif not self._modes_set and self._maybe_model(name) and (id(self.scope), name) not in self._moded:
                # called in the step, its parameters handed out in another file (a GAN's generator passed in)
                self._moded.add((id(self.scope), name))
                modes.append(parse_statement(f"{train}.train_mode({name})\n"))
            elif name in reached and (id(self.scope), name) not in self._moded:
                # an attribute of the trainer the step calls, directly or through the class's own methods
                # (self.sample_generator(n) calling self.G(z)): a model built in another file (EmilienDupont's WGAN-GP
                # Trainer), trained from birth in torch; its BatchNorm had normalized with running statistics
                self._moded.add((id(self.scope), name))
                modes.append(parse_statement(f"{train}.train_mode({name})\n"))
            elif self._modes_set and name in self._owners and (id(self.scope), name) not in self._moded \
                    and not _mode_set_in(body[:min(plan.forward, default=0)], name):
                # the file switches modes, but no line of this block before the step sets this model's (a second
                # model built after the first one's model.train()): torch's Module trains from birth unless its mode
                # was set (mindport.runtime.training.train_mode decides at run time)
                self._moded.add((id(self.scope), name))
                modes.append(parse_statement(f"{train}.train_mode({name})\n"))
        later = self._unbound_yet(body, plan.site.index)
        sources = ", ".join(dict.fromkeys([*self._weight_sources(stmts, set(positional), later), *extra,
                                           *as_weights]))
        weights = f", {train}.parameters({sources})" if sources else ""
        leaves = f", leaves={len(positional)}" if positional else ""
        if plan.joint:
            leaves += f", losses={1 + len(plan.joint)}" + (", apart=True" if plan.apart else "")
            grads = f"({', '.join([grads, *parts])})"
        lhs = targets[0] if len(targets) == 1 else f"({', '.join(targets)})"
        if modes and self._loops[-1]:  # in a loop: once before the outermost loop of the scope (see _place)
            self._preludes.append((forward_fn, modes))
            self._mode_preludes.add(id(modes))
            modes = []
        differentiate = f"{lhs}, {grads} = {grad_fn}({', '.join(call_args)})\n"
        if guard is not None and set(targets) & set(args):
            # a value carried from step to step (a loss summed over steps, one backward every k): each step's
            # forward must stay differentiated, or the sum a later backward reads is a constant (its gradient lost)
            guard = None
        if guard is not None:  # backward() only under `if <guard>:` (an eval pass of the same code): forward only
            differentiate = (f"if {code_of(guard)}:\n    {differentiate}"
                             f"else:\n    {lhs} = {fn_name}({', '.join(call_args)})\n")
        unbind = [parse_statement(f"if {n} is {train}.UNBOUND:\n    del {n}\n") for n in branch_only]
        return [*modes, forward_fn,
                parse_statement(f"{grad_fn} = {train}.value_and_grad({fn_name}{weights}{leaves})\n"),
                parse_statement(differentiate), *unbind]

    def _leaves_through(self, stmts) -> list[str]:
        """The Parameters made of leaves the file's functions called in the forward read as module globals."""
        found: list[str] = []
        for call in _all_calls(cst.Module(body=list(stmts))):
            if isinstance(call.func, cst.Name) and call.func.value in self._function_globals:
                found += sorted(self._function_globals[call.func.value] & self._global_leaves)
        return list(dict.fromkeys(found))

    def _weight_sources(self, stmts, leaves: set[str], later: frozenset[str] = frozenset()) -> list[str]:
        """What the forward reads its parameters from: the optimizers the scope steps or resets, and the models it
        calls (the receiver of a method it calls, too); mindport.runtime.training.parameters keeps the Parameters.
        ``later``: names not bound yet where the step runs (see _unbound_yet)."""
        found: list[str] = []
        scope_node = self._scope_nodes.get(id(self.scope))
        written = set().union(*(reads_writes(s)[1] for s in stmts))
        forward = self._forward_names(stmts)
        # `self.optimizer.step()` in a class's method is no optimizer of a module-level loop (one after a Trainer
        # class named `self.optimizer`: NameError); a function's, closures included, may read an enclosing `self`
        binds_self = not isinstance(scope_node, cst.Module)
        outer = self._outer_loops.get(id(self.scope)) if self._loops[-1] else None  # the loop holding the step
        for call in _all_calls(scope_node) if scope_node is not None else ():
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("step", "zero_grad"):
                receiver = dotted_name(call.func.value)
                if receiver and receiver.split(".")[0] == "self" and not binds_self:
                    continue
                if receiver and "sched" not in receiver.lower() and receiver not in self.scalers \
                        and self.scope.resolve_dotted(receiver) is None and not self._bound_later(receiver) \
                        and receiver not in later and not (outer is not None and "." not in receiver
                                                           and _bound_only_elsewhere(scope_node, outer, receiver)):
                    found.append(receiver)
        for stmt in stmts:
            for call in _all_calls(stmt):
                if self._library_call(call.func) or isinstance(call.func, cst.Name) and call.func.value in _BUILTINS:
                    continue
                name = dotted_name(call.func) or ""
                if name.split(".")[0] in forward:
                    found.append(name)
                    if isinstance(call.func, cst.Attribute):
                        found.append(dotted_name(call.func.value))
        # an object the forward only stores attributes on (a Trainer's ``self.loss = ...``) is not rebound: the
        # models and optimizers read through it stay weight sources, all but the attributes stored (before, a
        # method's ``self.loss = self.criterion(self.model(x), y)`` left value_and_grad no weights: "does not
        # require grad")
        mutated = _attribute_stores_only(stmts)
        stored = _stored_paths(stmts)
        rebound = written - mutated | leaves
        # a name a comprehension binds (``[c(f_s, f_t) for f_s, f_t, c in zip(g_s, g_t, criterion_kd)]``,
        # RepDistiller's VID losses) exists only inside it: named at the step it was a NameError; the modules it
        # takes are read through the iterable (criterion_kd), a weight source of its own
        local = {n for stmt in stmts for comp in all_nodes(stmt, cst.CompFor) for n in target_names(comp.target)}
        return [n for n in dict.fromkeys(found) if n.split(".")[0] not in rebound | (local - written)
                and not any(n == p or n.startswith(p + ".") for p in stored)]

    def _unbound_yet(self, body, index: int) -> frozenset[str]:
        """Names every binding of which in the scope comes after statement ``index`` of ``body``, in ``body`` itself,
        outside a loop: not bound yet when that statement runs. The 60-minute blitz's module-level ``loss.backward()``
        by hand comes before its ``optimizer = optim.SGD(...)`` line, which the step's weights named (NameError)."""
        scope_node = self._scope_nodes.get(id(self.scope))
        if scope_node is None or self._loops[-1]:
            return frozenset()

        def bound(nodes) -> Counter:
            return Counter(n for node in nodes for a in all_nodes(node, cst.Assign) for t in a.targets
                           for n in target_names(t.target))

        after, before, everywhere = bound(body[index + 1:]), bound(body[:index + 1]), bound([scope_node])
        return frozenset(n for n, k in after.items() if not before[n] and everywhere[n] == k)

    def _bound_later(self, name: str) -> bool:
        """Is ``name`` (an optimizer the scope steps) bound in this scope only by statements after the loop being
        rewritten? A script that runs several loops in turn, each with its own optimizer made right before it
        (``opt_sgd = SGD([x])``, loop, ``opt_adam = Adam([x])``, loop), has no such optimizer yet at an earlier loop:
        naming it there would raise NameError (and its parameters are not this loop's)."""
        scope_node, loop = self._scope_nodes.get(id(self.scope)), self._outer_loops.get(id(self.scope))
        if scope_node is None or loop is None or not isinstance(getattr(scope_node, "body", None), (list, tuple,
                                                                                                   cst.IndentedBlock)):
            return False
        body = scope_node.body.body if isinstance(scope_node.body, cst.IndentedBlock) else scope_node.body
        at = next((i for i, stmt in enumerate(body) if _contains(stmt, loop)), None)
        if at is None:  # the loop's position in the scope is unknown: nothing is known to come after it
            return False
        bound = [i for i, stmt in enumerate(body) for a in all_nodes(stmt, cst.Assign)
                 if any(name in target_names(t.target) for t in a.targets)]
        return bool(bound) and min(bound) > at

    def _own_methods(self) -> set[str] | None:
        """In a method of a class, the names of the class's methods (and properties); None elsewhere."""
        return set(self._class_bodies[-1]) if self._class_bodies else None

    def _reached_attributes(self, stmts) -> list[str]:
        """In a method of a class, the ``self.<name>`` a step calls, directly or through the class's own methods it
        calls (``self.sample_generator(n)``, whose body calls ``self.G(z)``), ``<name>`` not a method of the class:
        attributes that may hold a model handed to the object by another file (a Trainer given its generator and
        critic). mindport.runtime.training.train_mode decides at run time (Cells only, a mode set kept)."""
        if not self._class_bodies:
            return []
        methods, out, seen = self._class_bodies[-1], [], set()
        todo = [cst.Module(body=list(stmts))]
        while todo:
            for call in _all_calls(todo.pop()):
                name = dotted_name(call.func)
                if not name or not name.startswith("self.") or name.count(".") != 1:
                    continue
                if name[5:] not in methods:
                    out += [name] if name not in out else []
                elif name[5:] not in seen:
                    seen.add(name[5:])
                    todo.append(methods[name[5:]])
        return out

    def _maybe_model(self, name: str | None) -> bool:
        """A parameter of the enclosing function that a step calls and that may hold a model handed in by another
        file (``train_wgan(dataloader, generator, critic, ...)``): not a function of the file, not a builtin, not
        imported (mindport.runtime.training.train_mode decides at run time: Cells only). Names the file binds itself
        (a model it builds, a loss) are left to the other evidence (``.parameters()`` read)."""
        if not name or "." in name or name in self._functions or name in _BUILTIN_NAMES:
            return False
        scope_node = self._scope_nodes.get(id(self.scope))
        if not isinstance(scope_node, cst.FunctionDef):
            return False
        params = scope_node.params
        own = {q.name.value for q in (*params.posonly_params, *params.params, *params.kwonly_params)}
        return name in own and self.scope.resolve(cst.Name(name)) is None

    def _place(self, body: list, bound_here: bool = False) -> list:
        """The preludes (forward_fn, grad_fn) of the loops a statement of the block contains go right before it. In
        an outer loop's body (``bound_here``), only a prelude that reads a name the body binds (an optimizer or a
        model built per setting, ``for lr in lrs: opt = SGD([x], lr=lr)``), else it waits for the enclosing block:
        grad_fn takes the optimizer's parameters when it is built."""
        bound = set().union(*(reads_writes(stmt)[1] for stmt in body)) if bound_here else set()
        out = []
        for stmt in body:
            for loop, prelude in list(self._preludes):
                reads = set().union(*(_names([p]).reads for p in prelude if not isinstance(p, cst.FunctionDef)))
                if bound_here and not bound & reads:
                    continue
                moding = id(prelude) in self._mode_preludes
                if moding and self._loops[-1] and not bound & reads:
                    continue  # model.set_train(True): before the outermost loop of the scope, unless it binds the model
                if _contains(stmt, loop):
                    self._preludes.remove((loop, prelude))
                    if moding:  # a model switched to inference mode before the loop keeps it (torch trains it so:
                        # MindSpore's Cell is too); each model on its own, the others of the step train from birth
                        # (a frozen teacher's eval() had kept its student's BatchNorm in inference mode as well)
                        prelude = [m for m in prelude if not self._evaluated_before(out, [m])]
                        if not prelude:
                            continue
                    if moding and (at := self._called_since_built(out, prelude)) is not None:
                        out[at:at] = prelude  # right after the model is built: it is called before the loop
                        continue
                    if stmt.leading_lines:  # the loop's comments and blank lines stay on top of the new block
                        prelude = [prelude[0].with_changes(leading_lines=stmt.leading_lines), *prelude[1:]]
                        stmt = stmt.with_changes(leading_lines=[])
                    out.extend(prelude)
            out.append(stmt)
        return out

    @staticmethod
    def _called_since_built(stmts, modes) -> int | None:
        """Where the train-mode lines ``modes`` go when a statement before the loop calls the model (a sanity forward
        after building it, ``out, loss = m(xb, yb)``): right after the statement building it, as torch's Module trains
        from birth. MindSpore's Cell starts in inference mode, so that call ran without dropout (mini_shakespeare:
        the printed loss differed, and the shared random stream the dropout masks draw from was one call behind from
        then on). None when nothing calls it before the loop, or the block does not build it."""
        models = set()
        for m in modes:
            for c in _all_calls(m):
                if isinstance(c.func, cst.Attribute) and c.func.attr.value == "set_train":
                    models.add(dotted_name(c.func.value))  # model.set_train(True)
                elif isinstance(c.func, cst.Attribute) and c.func.attr.value == "train_mode" and c.args:
                    models.add(dotted_name(c.args[0].value))  # mp_train.train_mode(model)
        models.discard(None)
        built = max((i for i, s in enumerate(stmts) for a in all_nodes(s, cst.Assign) for t in a.targets
                     if set(target_names(t.target)) & models), default=None)
        if built is None or not any(dotted_name(c.func) in models for s in stmts[built + 1:] for c in _all_calls(s)):
            return None
        return built + 1

    def _evaluated_before(self, stmts, modes) -> bool:
        """Does a statement before the loop switch the model to inference mode (``model.eval()``)? Then torch trains
        it in that mode (the file never calls ``train()``), as a Cell trains by default."""
        models = {code_of(m).strip().rsplit(".set_train", 1)[0] for m in modes}
        return any(isinstance(c.func, cst.Attribute) and dotted_name(c.func.value) in models and (
            c.func.attr.value == "eval" or c.func.attr.value == "set_train" and c.args
            and code_of(c.args[0].value).strip() == "False") for stmt in stmts for c in _all_calls(stmt))

    def _read_outside(self, region_names: _Names) -> set[str]:
        """Names the enclosing function (or module) reads outside the forward region, e.g. ``out`` printed after the
        loop: forward_fn must hand them back, or they would be unbound there."""
        scope_node = self._scope_nodes.get(id(self.scope))
        if scope_node is None:
            return set()
        outside = Counter(_names([scope_node]).reads)
        outside.subtract(Counter(region_names.reads))
        return {name for name, count in outside.items() if count > 0}

    # --- the rewrite itself
    def _rewrite(self, loop: cst.For, targets: list[str], resets: bool):
        if not isinstance(loop.body, cst.IndentedBlock):
            raise _Unfit("the loop body is on one line")
        body = list(loop.body.body)
        if sum(method_call(c, "backward") is not None for c in _own_calls(loop)) > 1:
            raise _Unfit("more than one .backward() in the loop")
        back = next((i for i, s in enumerate(body) if (c := _expr_call(s)) is not None
                     and method_call(c, "backward") is not None), None)
        if back is None:
            raise _Unfit(".backward() is nested in a block; keep it at the loop's top level")
        backward = _expr_call(body[back])
        if backward.args:
            raise _Unfit(".backward(...) with arguments (retain_graph, gradient) has no value_and_grad equivalent")
        diff_expr = backward.func.value  # what torch differentiates
        scaler = None
        if (inner := method_call(diff_expr, "scale")) is not None and len(inner.args) == 1:
            scaler = _receiver_name(inner)
            loss_expr = inner.args[0].value
        else:
            loss_expr = diff_expr
        loss_name = dotted_name(loss_expr) if isinstance(loss_expr, cst.Name) else None
        if loss_name is None and isinstance(loss_expr, cst.BinaryOperation) and isinstance(loss_expr.left, cst.Name):
            loss_name = loss_expr.left.value  # (loss / accum_steps).backward()
        if loss_name is None:
            raise _Unfit(f"cannot tell the loss in {code_of(diff_expr)}.backward()")

        # the forward region: assignments (and autocast blocks) directly before backward
        start = back
        autocast: list[cst.Call] = []
        region: list[cst.BaseStatement] = []
        while start > 0:
            stmt = body[start - 1]
            if isinstance(stmt, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign)) for s in stmt.body):
                region.insert(0, stmt)
            elif isinstance(stmt, cst.With) and self._autocast_items(stmt) is not None:
                autocast.extend(self._autocast_items(stmt))
                inner_body = list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
                region[:0] = inner_body
            else:
                break
            start -= 1
        if loss_name not in _names(region).writes:
            raise _Unfit(f"{loss_name} is not computed by the assignments right before .backward()")
        needed = set(_names([diff_expr]).reads)
        for stmt in reversed(region):
            reads, writes = reads_writes(stmt)
            if not writes & needed:
                raise _Unfit(f"{code_of(stmt).strip()!r} does not feed the loss")
            needed = (needed - writes) | reads
        self._forward_before(body[:start], needed, region)
        carried = set(reads_before_writes(body[:start] + region)) & set(_names(region).writes)
        if carried:
            raise _Unfit(f"{', '.join(sorted(carried))} carried from one step to the next")

        # optimizer names: zero_grad receivers, torch.optim assignments, scaler.step(opt)
        optimizers = set(self.optimizers)
        for call in _own_calls(loop):
            if (c := method_call(call, "zero_grad")) is not None and _receiver_name(c):
                optimizers.add(_receiver_name(c))
            if (c := method_call(call, "step")) is not None and _receiver_name(c) in self.scalers | {scaler} \
                    and c.args:
                optimizers.add(dotted_name(c.args[0].value) or "")
        rest = body[back + 1:]
        self._grads_read_elsewhere(body, start, rest, optimizers)
        never_reset = False
        accumulate = any(isinstance(s, cst.If) and self._has_step(s, optimizers) for s in rest)
        if not accumulate and not resets and self._resets_through_helper(loop, optimizers):
            # attack(model, x, y, optimizer) calling optimizer.zero_grad() inside: torch resets .grad there, each step
            raise _Unfit("a function the loop calls resets the optimizer's gradients (zero_grad() in its body)")
        if not accumulate and not resets:
            # no zero_grad(): torch adds each iteration's gradients into .grad, and every step applies the sum
            if self._loop_targets:
                raise _Unfit("no zero_grad() in the loop: torch adds each iteration's gradients to the previous "
                             "ones, and the enclosing loop may reset them")
            accumulate = never_reset = True  # accum_grads, never reset: the running sum torch's .grad holds
        if not accumulate and not any(self._is_step(s, optimizers) for s in rest):
            raise _Unfit("no <optimizer>.step() after .backward() (at the loop's top level or in an if block)")
        opt = next((n for s in rest for n in self._step_names(s, optimizers)), None)
        if opt is None:
            raise _Unfit("cannot tell which optimizer steps")
        if len({n for s in rest for n in self._step_names(s, optimizers)}) > 1:
            # grad_fn differentiates for one optimizer's parameters; torch's backward fills every tensor's .grad and
            # each optimizer steps its own (2xic's Alice and Bob: Bob stepped with Alice's gradients)
            raise _Unfit("one backward() stepped by several optimizers: each takes its own parameters' .grad")
        last = max(i for i, s in enumerate(rest) if self._step_names(s, optimizers))
        for stmt in rest[:last]:
            call = _expr_call(stmt)
            if call is not None and isinstance(call.func, cst.Name) and call.func.value not in _BUILTIN_NAMES \
                    and self.scope.resolve_torch(call.func) is None and call.args:
                # a helper of the project between backward() and step() (clip_gradients(eve, 1): clip_grad_value_ on
                # the model's .grad) reads or writes .grad, which grad_fn's gradients never reach
                raise _Unfit(f"{code_of(call.func)}(...) between backward() and step() may read or write .grad")
        key = (id(self.scope), opt)
        carried = never_reset and key in self._never_reset  # an earlier such loop's sum is where torch's .grad stands
        if never_reset and key in self._stepped and not carried:
            raise _Unfit("no zero_grad() in the loop: torch adds its gradients to those an earlier loop left in .grad")

        # forward_fn's parameters: loop-varying names it reads before assigning them
        before = _names(body[:start])
        varying = set(targets) | set(before.writes)
        region_names = _names(region)
        params: list[str] = []
        assigned: set[str] = set()
        for stmt in region:
            names = _names([stmt])
            for n in names.reads:
                if n in varying and n not in assigned and n not in params:
                    params.append(n)
            assigned.update(names.writes)
        later = set(_names(rest).reads) | self._read_outside(region_names)
        aux = [n for n in dict.fromkeys(region_names.writes) if n != loss_name and n in later]
        ms = self.ctx.alias_for("mindspore")
        grads = "accum_grads" if accumulate else "grads"
        differentiated = None if scaler is None and isinstance(loss_expr, cst.Name) else code_of(diff_expr)
        if differentiated is not None:
            outputs = ["_", loss_name, *aux]
            returned = [differentiated, loss_name, *aux]
        else:
            outputs = [loss_name, *aux]
            returned = [loss_name, *aux]
        has_aux = len(returned) > 1
        fn_body = [*(s.with_changes(leading_lines=[]) if i == 0 else s for i, s in enumerate(region)),
                   parse_statement(f"return {', '.join(returned)}\n")]
        forward_fn = cst.FunctionDef(
            name=cst.Name(self._fresh("forward_fn", loop)),
            params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
            body=cst.IndentedBlock(body=fn_body))
        fn_name = forward_fn.name.value
        grad_fn = self._fresh("grad_fn", loop)
        model = self._model_name(region, loss_name)
        prelude: list[cst.BaseStatement] = self._amp_prelude(autocast, model) if autocast else []
        prelude += [forward_fn, parse_statement(
            f"{grad_fn} = {ms}.value_and_grad({fn_name}, None, {opt}.parameters{', has_aux=True' if has_aux else ''})\n")]
        if accumulate and not carried:
            prelude.append(parse_statement("accum_grads = None\n"))
        scope_node = self._scope_nodes.get(id(self.scope))
        if model is not None and not (scope_node is not None and _sets_train_mode(scope_node)):
            if not (scope_node is not None and self._loop_original is not None
                    and _mode_set_before(scope_node, self._loop_original, model, in_body=False)):
                # a file that never calls train(): torch's Module trains from birth; but a model.eval() before the
                # loop (and no train()) trains it in inference mode in torch (Dropout off), as the Cell stays (an
                # eval() in the loop's own body, after the steps, does not count: the first pass trains)
                prelude.append(parse_statement(f"{model}.set_train(True)\n"))
        elif model is not None and scope_node is not None and self._loop_original is not None \
                and not _mode_set_before(scope_node, self._loop_original, model):
            # the scope switches modes, but not this model's before its loop (a second model built and trained after
            # the first one's model.train()): torch's Module trains from birth, unless something set its mode
            # (mindport.runtime.training.train_mode decides at run time)
            prelude.append(parse_statement(f"{self.ctx.alias_for('mindport.runtime.training')}.train_mode({model})\n"))
        if not self._modes_set and not (scope_node is not None and _sets_train_mode(scope_node)):
            # the other names the step calls that may be models (a WGAN critic loop's generator(noise), built and
            # handed in by another file): torch's Modules train from birth (mindport.runtime.training.train_mode)
            train = self.ctx.alias_for("mindport.runtime.training")
            prelude += [parse_statement(f"{train}.train_mode({name})\n")
                        for name in dict.fromkeys(dotted_name(c.func) for c in _all_calls(cst.Module(body=region)))
                        if name != model and name not in self._owners and self._maybe_model(name)]
        lhs = f"({', '.join(outputs)})" if has_aux else outputs[0]
        step: list[cst.BaseStatement] = [parse_statement(f"{lhs}, grads = {grad_fn}({', '.join(params)})\n")]
        if scaler is not None:
            step.append(parse_statement(f"grads = {scaler}.unscale(grads)\n"))
        if accumulate:
            step.append(parse_statement("accum_grads = grads if accum_grads is None else "
                              "tuple(a + g for a, g in zip(accum_grads, grads))\n"))
        new_rest = self._rewrite_after(rest, optimizers, grads, scaler)
        if self._clips(cst.Module(body=new_rest)):  # clipping in a block the rewrite does not follow (a with, a loop)
            raise _Unfit("clip_grad_*_ nested in a block after .backward()")
        first = step[0].with_changes(leading_lines=body[start].leading_lines if start < len(body) else [])
        head = [s for s in body[:start] if not self._is_zero_grad(s, optimizers)]
        new_body = [*head, first, *step[1:], *new_rest]
        self._stepped.add(key)
        if never_reset:
            self._never_reset.add(key)
        return loop.with_changes(body=loop.body.with_changes(body=new_body)), prelude

    def _resets_through_helper(self, loop, optimizers: set[str]) -> bool:
        """Does the loop call a module-level function of the file, handing it an optimizer (by name, positionally or
        by keyword) whose parameter that function calls ``zero_grad()`` on? (TRADES' ``trades_loss(model, ...,
        optimizer=optimizer)`` resets the gradients inside the forward.) Without a ``zero_grad()`` of its own the
        loop would be taken for one summing every step's gradients."""
        for call in _own_calls(loop):
            if not isinstance(call.func, cst.Name) or call.func.value not in self._resetting:
                continue
            positions, names = self._resetting[call.func.value]
            for i, arg in enumerate(call.args):
                handed = dotted_name(arg.value)
                if handed in optimizers and (arg.keyword is None and i in positions
                                             or arg.keyword is not None and arg.keyword.value in names):
                    return True
        return False

    def _grads_read_elsewhere(self, body: list, start: int, rest: list, optimizers: set[str]) -> None:
        """The rewrite keeps the gradients in ``grads``/``accum_grads`` and drops ``zero_grad()`` where it stands at
        the loop's top level or resets the sum in the ``if`` that steps. torch's ``.grad`` is also reset or read
        elsewhere: ``if i % k == 0: opt.zero_grad()`` before the forward, or a step after the loop for the remainder
        of an accumulation (``if n % k != 0: opt.step()``), which applies the sum the loop left in ``.grad``. Such a
        loop goes to the general backward region, which keeps ``.grad`` on the tensors."""
        placed = [s for s in body[:start] + rest
                  if isinstance(s, cst.SimpleStatementLine) or (isinstance(s, cst.If) and self._has_step(s, optimizers))]
        placed_calls = {id(c) for s in placed for c in _own_calls(s)}
        if any(method_call(c, "zero_grad") is not None and id(c) not in placed_calls
               for s in body for c in _own_calls(s)):
            raise _Unfit("zero_grad() inside a block other than the stepping if: torch resets .grad there")
        scope_node = self._scope_nodes.get(id(self.scope))
        if scope_node is not None and _bare_steps(scope_node, optimizers):
            raise _Unfit("the optimizer steps outside a loop that calls backward: it applies what .grad holds then")

    def _forward_before(self, head: list, needed: set[str], region: list) -> None:
        """The rewrite differentiates only the assignments right before ``.backward()``; a tensor they read that an
        earlier statement of the loop computes by calling a model (``output = model(x)``, then ``zero_grad()`` or a
        print, then ``loss = criterion(output, y)``) would enter forward_fn as a constant: no gradient reaches the
        model. Such a loop goes to the general backward region, whose forward statements are the whole slice."""
        forward = self._forward_names(head)
        stored = {name for name in needed & forward if _stored_attribute_read(region, name)
                  and any(_discarded_model_call(s, forward) == name for s in head)}
        if stored:  # model(data) then loss = k * model.loss: the loss is what the call stored on the model
            raise _Unfit(f"the loss reads what a call of {', '.join(sorted(stored))} before it stored on it")
        needed = needed - forward  # a model the loss calls is read, not computed, by the step
        for stmt in reversed(head):
            reads, writes = reads_writes(stmt)
            if not writes & needed or _is_gradient_api(stmt):
                continue
            if any(isinstance(c.func, cst.Name) and c.func.value in forward
                   or (dotted_name(c.func) or "").startswith("self.") for c in _all_calls(stmt)):
                raise _Unfit(f"{', '.join(sorted(writes & needed))} is computed by a model call before the "
                             "assignments right before .backward()")
            needed = (needed | reads) - forward
    def _fresh(self, name: str, loop) -> str:
        """``forward_fn``/``grad_fn``, unless the user's code binds that name (each loop redefines its own)."""
        taken = set(getattr(self.scope, "names", ())) | set(getattr(self.ctx.module_scope, "names", ())) \
            | self._hoisted.get(id(self.scope), set())
        while name in taken:
            name += "_"
        return name

    def _fresh_in(self, name: str, taken: set[str]) -> str:
        """``_fresh``, and not a name of the block either (one an earlier rewrite of the block made)."""
        name = self._fresh(name, None)
        while name in taken:
            name = self._fresh(name + "_", None)
        return name

    def _autocast_items(self, stmt: cst.With):
        calls = []
        for item in stmt.items:
            call = item.item
            if not isinstance(call, cst.Call) or item.asname is not None:
                return None
            if not ((self.scope.resolve_torch(call.func) or "") in _AUTOCAST or dotted_name(call.func) in (
                    "torch.autocast", "autocast")):
                return None
            calls.append(call)
        return calls

    def _amp_prelude(self, calls: list[cst.Call], model: str | None) -> list[cst.BaseStatement]:
        if model is None:
            raise _Unfit("autocast around a forward pass whose network is not a plain name")
        ms = self.ctx.alias_for("mindspore")
        call = calls[0]
        kwargs = {a.keyword.value: code_of(a.value) for a in call.args if a.keyword is not None}
        positional = [code_of(a.value) for a in call.args if a.keyword is None]
        qual = self.scope.resolve_torch(call.func) or ""
        if qual in ("torch.cuda.amp.autocast", "torch.cpu.amp.autocast"):  # (enabled, dtype, cache_enabled)
            device = '"cuda"' if qual.startswith("torch.cuda") else '"cpu"'
            enabled = kwargs.get("enabled", positional[0] if positional else "True")
            dtype = kwargs.get("dtype", positional[1] if len(positional) > 1 else None)
        else:  # torch.autocast / torch.amp.autocast: (device_type, dtype, enabled, cache_enabled)
            device = kwargs.get("device_type", positional[0] if positional else '"cuda"')
            dtype = kwargs.get("dtype", positional[1] if len(positional) > 1 else None)
            enabled = kwargs.get("enabled", positional[2] if len(positional) > 2 else "True")
        if dtype is None:
            dtype = f"{ms}.bfloat16" if "cpu" in device else f"{ms}.float16"
        dtype = dtype.replace("torch.", f"{ms}.")
        if enabled == "False":
            return []
        line = f"{model} = {ms}.amp.auto_mixed_precision({model}, amp_level=\"auto\", dtype={dtype})\n"
        # CUDA's autocast (torch.cuda.amp.autocast(), torch.autocast("cuda")) casts CUDA ops only: on a run without
        # CUDA torch computes in float32, so the network is converted only where MindSpore computes on a GPU
        cuda = device.strip("\"'") == "cuda"
        conditions = ([] if enabled == "True" else [enabled]) + (
            [f'{ms}.get_context("device_target") == "GPU"'] if cuda else [])
        if not conditions:
            return [parse_statement(line)]
        return [parse_statement(f"if {' and '.join(conditions)}:\n    {line}")]

    def _model_name(self, region, loss_name: str) -> str | None:
        """The model the loop trains: a callee of the region (at any depth: ``criterion(model(x), y)``) whose
        parameters the file hands out (``model.parameters()``, an optimizer's), else a call assigned to a name."""
        scope_node = self._scope_nodes.get(id(self.scope))
        owners = _parameter_owners(scope_node) if scope_node is not None else set()
        for call in _all_calls(cst.Module(body=list(region))):
            if (name := dotted_name(call.func)) in owners:
                return name
        for stmt in region:
            for small in getattr(stmt, "body", ()):
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                    names = [n for t in small.targets for n in target_names(t.target)]
                    func = small.value.func
                    if loss_name not in names and isinstance(func, (cst.Name, cst.Attribute)) \
                            and not self._library_call(func) and dotted_name(func) not in self._functions:
                        return dotted_name(func)
        return None

    def _library_call(self, func) -> bool:
        """``torch.from_numpy(...)`` (or the MindSpore call it became) is no model: a callee named through an import
        or a MindSpore module alias."""
        dotted = dotted_name(func) or ""
        return self.scope.resolve_dotted(dotted) is not None or dotted.split(".", 1)[0] in self.ctx.aliases.values()
           

    def _is_step(self, stmt, optimizers) -> bool:
        return bool(self._step_names(stmt, optimizers)) and not isinstance(stmt, cst.If)

    def _has_step(self, stmt, optimizers) -> bool:
        return any(self._step_names(s, optimizers) for s in stmt.body.body) if isinstance(
            stmt.body, cst.IndentedBlock) else False

    def _step_names(self, stmt, optimizers) -> list[str]:
        if isinstance(stmt, cst.If) and isinstance(stmt.body, cst.IndentedBlock):
            return [n for s in stmt.body.body for n in self._step_names(s, optimizers)]
        call = _expr_call(stmt)
        if call is None or (c := method_call(call, "step")) is None:
            return []
        name = _receiver_name(c)
        if name in optimizers and not c.args:
            return [name]
        if c.args and (name in self.scalers) and dotted_name(c.args[0].value) in optimizers:
            return [dotted_name(c.args[0].value)]
        return []

    def _is_zero_grad(self, stmt, optimizers) -> bool:
        call = _expr_call(stmt)
        return call is not None and method_call(call, "zero_grad") is not None

    def _rewrite_after(self, stmts, optimizers, grads: str, scaler: str | None) -> list:
        ms = self.ctx.alias_for("mindspore")
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.If) and self._has_step(stmt, optimizers):
                inner = self._rewrite_after(list(stmt.body.body), optimizers, grads, scaler)
                inner = [s for s in inner if not (isinstance(s, cst.SimpleStatementLine) and code_of(s).strip() ==
                                                  "accum_grads = None")] + [parse_statement("accum_grads = None\n")]
                out.append(stmt.with_changes(body=stmt.body.with_changes(body=inner)))
                continue
            if isinstance(stmt, cst.If) and isinstance(stmt.body, cst.IndentedBlock) and self._clips(stmt):
                out.append(self._rewrite_if(stmt, optimizers, grads, scaler))  # if args.clip > 0: clip_grad_norm_
                continue
            clipped = self._assigned_clip(stmt)
            if clipped is not None:  # total = clip_grad_norm_(...): the norm before clipping, then the clip
                target, call = clipped
                ops = self.ctx.alias_for("mindspore.ops")
                out.append(parse_statement(f"{target} = {ops}.sqrt(sum((g * g).sum() for g in {grads}))\n").with_changes(
                    leading_lines=stmt.leading_lines))
                out.append(self._clip(call, "norm", grads))
                continue
            call = _expr_call(stmt)
            if call is None:
                out.append(stmt)
                continue
            keep = dict(leading_lines=stmt.leading_lines)
            qual = self.scope.resolve_torch(call.func) or ""
            name = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
            receiver = _receiver_name(call) if isinstance(call.func, cst.Attribute) else None
            if qual in _CLIP:
                out.append(self._clip(call, _CLIP[qual], grads).with_changes(**keep))
            elif name == "zero_grad":
                if grads == "accum_grads":
                    out.append(parse_statement("accum_grads = None\n").with_changes(**keep))
            elif name == "unscale_" and receiver == scaler:
                continue  # grads are unscaled right after grad_fn
            elif name == "step" and receiver in optimizers and not call.args:
                out.append(stmt.with_changes(body=[cst.Expr(parse_expression(f"{receiver}({grads})"))]))
            elif name == "step" and receiver == scaler and call.args:
                opt = code_of(call.args[0].value)
                out.append(parse_statement(f"if {ms}.amp.all_finite({grads}):\n    {opt}({grads})\n").with_changes(**keep))
            elif name == "update" and receiver == scaler and not call.args:
                out.append(parse_statement(f"{scaler}.adjust({ms}.amp.all_finite({grads}))\n").with_changes(**keep))
            else:
                out.append(stmt)
        return out

    def _clips(self, node) -> bool:
        return any((self.scope.resolve_torch(c.func) or "") in _CLIP for c in _all_calls(node))

    def _rewrite_if(self, stmt: cst.If, optimizers, grads: str, scaler: str | None) -> cst.If:
        """An ``if`` (no step in it) around clipping: its branches rewritten as the loop's statements are."""
        body = stmt.body.with_changes(body=self._rewrite_after(list(stmt.body.body), optimizers, grads, scaler))
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            orelse = self._rewrite_if(orelse, optimizers, grads, scaler)
        elif orelse is not None and isinstance(orelse.body, cst.IndentedBlock):
            orelse = orelse.with_changes(body=orelse.body.with_changes(
                body=self._rewrite_after(list(orelse.body.body), optimizers, grads, scaler)))
        return stmt.with_changes(body=body, orelse=orelse)

    def _assigned_clip(self, stmt) -> tuple[str, cst.Call] | None:
        """``name = clip_grad_norm_(...)`` -> (name, call); clip_grad_value_ returns None in torch: not rewritten."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
            return None
        assign = stmt.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name) and isinstance(assign.value, cst.Call)):
            return None
        if _CLIP.get(self.scope.resolve_torch(assign.value.func) or "") != "norm":
            return None
        return assign.targets[0].target.value, assign.value

    def _clip(self, call: cst.Call, kind: str, grads: str) -> cst.BaseStatement:
        entry = self.ctx.registry.lookup("torch.nn.utils.clip_grad_norm_" if kind == "norm"
                                         else "torch.nn.utils.clip_grad_value_")
        try:
            bound = bind_arguments(entry, list(call.args))
        except CallBindError as exc:
            raise _Unfit(f"clip_grad_*_ arguments: {exc}") from None
        ops = self.ctx.alias_for("mindspore.ops")
        if kind == "norm":
            if bound["norm_type"].given and bound["norm_type"].source not in ("2", "2.0"):
                raise _Unfit("clip_grad_norm_ with norm_type other than 2 (ops.clip_by_global_norm is L2)")
            return parse_statement(f"{grads} = {ops}.clip_by_global_norm({grads}, {bound['max_norm'].source})\n")
        value = bound["clip_value"].source
        return parse_statement(f"{grads} = {ops}.clip_by_value({grads}, -({value}), {value})\n")


_BUILTINS = frozenset(dir(__import__("builtins")))
_INPLACE = {cst.SubtractAssign: "sub_", cst.AddAssign: "add_", cst.MultiplyAssign: "mul_", cst.DivideAssign: "div_"}


_AUTOGRAD_GRAD_ARGS = ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "only_inputs",
                       "allow_unused", "is_grads_batched")


def _autograd_args(call: cst.Call) -> dict:
    """``torch.autograd.grad``'s arguments by name (``?`` for one past its positional ones)."""
    return {a.keyword.value if a.keyword else (_AUTOGRAD_GRAD_ARGS[i] if i < len(_AUTOGRAD_GRAD_ARGS) else "?"): a.value
            for i, a in enumerate(call.args)}


def _values_of(inputs: cst.BaseExpression) -> str | None:
    """``D`` when the inputs are ``D.values()`` (a dict of tensors by name: MAML's fast weights), else None."""
    if isinstance(inputs, cst.Call) and not inputs.args and isinstance(inputs.func, cst.Attribute) \
            and inputs.func.attr.value == "values" and isinstance(inputs.func.value, cst.Name):
        return inputs.func.value.value
    return None


def _creates_graph(call: cst.Call) -> bool:
    value = _autograd_args(call).get("create_graph")
    return value is not None and code_of(value).strip() not in ("False", "None")


_BUILTIN_NAMES = frozenset(dir(builtins))


def _parameter_owners(node) -> set[str]:
    """What ``.parameters()``/``.named_parameters()`` is called on in ``node``: models."""
    return {name for c in _all_calls(node) if isinstance(c.func, cst.Attribute) and c.func.attr.value in (
        "parameters", "named_parameters") and (name := dotted_name(c.func.value))}


def _assigned_names(stmts) -> list[str]:
    return [n for stmt in stmts for n in _names([stmt]).writes]


def _reads_grad(node) -> bool:
    class _Walk(cst.CSTVisitor):
        found = False

        def visit_Attribute(self, n) -> None:
            if n.attr.value == "grad":
                _Walk.found = True

    walk(node, _Walk())
    return _Walk.found


def _resetting_functions(module: cst.Module) -> dict[str, tuple[set[int], set[str]]]:
    """Module-level functions whose body calls ``<param>.zero_grad()`` on one of their parameters: name -> (the
    positions, the names of those parameters)."""
    out = {}
    for fn in module.body:
        if not isinstance(fn, cst.FunctionDef):
            continue
        params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        reset = {_receiver_name(c) for c in _all_calls(fn.body) if method_call(c, "zero_grad") is not None}
        if hit := reset & set(params):
            out[fn.name.value] = ({i for i, p in enumerate(params) if p in hit}, hit)
    return out


def _makes_leaf(value, scope) -> bool:
    """``torch.randn(..., requires_grad=True)``, ``x.clone().requires_grad_()``, ``Variable(x, requires_grad=True)``,
    ``nn.Parameter(t)`` assigned to a name: a tensor torch differentiates with no optimizer needed. A container
    display of them (``model = [nn.Parameter(torch.randn(2, 2, requires_grad=True))]``, handed whole to an optimizer
    as ildoonet's warmup demo does) is a list, not a leaf: wrapping it in one Parameter was MindSpore's TypeError."""
    if isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp,
                          cst.GeneratorExp)):
        return False
    for call in _all_calls(value):
        if any(a.keyword is not None and a.keyword.value == "requires_grad" and code_of(a.value).strip() == "True"
               for a in call.args):
            return True
        if method_call(call, "requires_grad_") is not None and not (call.args and code_of(
                call.args[0].value).strip() == "False"):
            return True
    return isinstance(value, cst.Call) and (scope.resolve_torch(value.func) or "") in (
        "torch.nn.Parameter", "torch.nn.parameter.Parameter")


def _marks_leaf(call) -> bool:
    """``x.requires_grad_()``, ``x.requires_grad_(True)``, ``x.requires_grad_(requires_grad=True)``."""
    if method_call(call, "requires_grad_") is None:
        return False
    return not call.args or len(call.args) == 1 and code_of(call.args[0].value).strip() == "True" and (
        call.args[0].keyword is None or call.args[0].keyword.value == "requires_grad")


def _leaf_flag(node: cst.Assign) -> str | None:
    """``x.requires_grad = True`` on a name: the name (x is a leaf tensor from here on)."""
    if len(node.targets) == 1 and isinstance(target := node.targets[0].target, cst.Attribute) \
            and target.attr.value == "requires_grad" and isinstance(target.value, cst.Name) \
            and isinstance(node.value, cst.Name) and node.value.value == "True":
        return target.value.value
    return None


def _function_globals(module: cst.Module) -> dict[str, set[str]]:
    """Each module-level function -> the names it reads but neither takes nor assigns (module globals), with those
    of the module-level functions it calls, transitively."""
    free: dict[str, set[str]] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            params = {p.name.value for p in (*stmt.params.posonly_params, *stmt.params.params,
                                             *stmt.params.kwonly_params)}
            names = _names([stmt.body])
            free[stmt.name.value] = set(names.reads) - set(names.writes) - params
    changed = True
    while changed:
        changed = False
        for name, reads in free.items():
            more = set().union(set(), *(free[g] for g in reads & free.keys() if g != name)) - reads
            if more:
                reads |= more
                changed = True
    return free


def _defines_backward_method(node: cst.Module) -> bool:
    """Whether a class of the file defines a method ``backward`` of its own (a normalising flow's inverse pass,
    ``def backward(self, z)``), not an ``autograd.Function``'s (a staticmethod, or a class based on Function)."""
    for cls in all_nodes(node, cst.ClassDef):
        if any((dotted_name(b.value) or "").rsplit(".", 1)[-1] == "Function" for b in cls.bases):
            continue
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "backward" and not any(
                    isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in stmt.decorators):
                return True
    return False


def _all_calls(node) -> list:
    return all_nodes(node, cst.Call)


def _bare_steps(scope_node, optimizers: set[str]) -> list:
    """``<opt>.step()`` calls of the scope whose innermost enclosing loop calls no ``.backward()`` itself (or that
    stand in no loop): they apply the gradients some loop left in ``.grad``."""
    found: list = []

    class _Walk(cst.CSTVisitor):
        def __init__(self) -> None:
            self.loops: list = []

        def visit_FunctionDef(self, n) -> bool:
            return n is scope_node

        def visit_For(self, n) -> None:
            self.loops.append(n)

        def leave_For(self, n) -> None:
            self.loops.pop()

        def visit_While(self, n) -> None:
            self.loops.append(n)

        def leave_While(self, n) -> None:
            self.loops.pop()

        def visit_Call(self, n) -> None:
            c = method_call(n, "step")
            if c is None or c.args or _receiver_name(c) not in optimizers:
                return
            if not self.loops or not any(method_call(b, "backward") is not None for b in _own_calls(self.loops[-1])):
                found.append(n)

    read(scope_node, _Walk())
    return found


def _backward_calls(stmt, grad_calls=frozenset()) -> list:
    """``.backward()`` calls (and ``torch.autograd.grad`` calls, by id) in a statement, not inside nested loops or
    definitions (their own blocks place them)."""
    found: list = []

    class _Walk(cst.CSTVisitor):
        def visit_For(self, n) -> bool:
            return False

        def visit_While(self, n) -> bool:
            return False

        def visit_FunctionDef(self, n) -> bool:
            return False

        def visit_ClassDef(self, n) -> bool:
            return False

        def visit_Lambda(self, n) -> bool:
            return False

        def visit_Call(self, n) -> None:
            if isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward" or id(n) in grad_calls:
                found.append(n)

    if isinstance(stmt, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
        return []
    walk(stmt, _Walk())
    return found


def _replace_sites(stmt, calls: dict, statements: dict):
    """``stmt`` with each call whose id is in ``calls`` replaced by that expression, and each expression statement
    that is a call whose id is in ``statements`` (at any depth) replaced by that statement, in one pass."""

    class _Swap(cst.CSTTransformer):
        def leave_Call(self, original_node, updated_node):
            return calls.get(id(original_node), updated_node)

        def leave_SimpleStatementLine(self, original_node, updated_node):
            call = _expr_call(original_node)
            if call is not None and id(call) in statements:
                return statements[id(call)].with_changes(leading_lines=original_node.leading_lines)
            return updated_node

    # walk.transform: a call the swap leaves alone keeps its identity (a second torch.autograd.grad of the same
    # statement, ``d(ul, xl) - d(ur, xr)``, is still found by its id once the first is replaced)
    return transform(stmt, _Swap())


def _branch_guard(body: list, plan: Plan):
    """The test of the ``if`` whose body holds the plan's ``backward()`` (``if mode == "train": loss.backward()``)
    when the differentiation may wait on it: a test without calls (evaluated once more, with the same value) that
    no statement from the first forward one up to the ``if`` assigns. In an evaluation pass the forward then runs
    without being differentiated, as torch builds a graph it never uses; None otherwise."""
    stmt = body[plan.site.index]
    if plan.reuse is not None or not isinstance(stmt, cst.If) \
            or not any(c is plan.site.call for c in _all_calls(cst.Module(body=list(_block_body(stmt.body))))):
        return None
    if all_nodes(stmt.test, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield, cst.Lambda)):
        return None
    reads = set(_names([stmt.test]).reads)
    if not reads:
        return None
    start = min([*plan.forward, plan.at])
    if any(reads & reads_writes(body[i])[1] for i in range(start, plan.site.index)):
        return None
    return stmt.test


def _block_body(block) -> list:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]


def named_like_optimizer(receiver: str) -> bool:
    """``self.optimizer``, ``opt_g``, ``scheduler.optimizer``: a receiver whose last name says optimizer (not a
    scheduler's), for the methods torch's optimizers and modules share (``state_dict``, ``load_state_dict``)."""
    last = receiver.rsplit(".", 1)[-1].lower()
    return "opt" in last and "sched" not in last


def named_like_scheduler(receiver: str) -> bool:
    """``scheduler``, ``self.sched``, ``lr_scheduler``: a receiver whose last name says learning-rate scheduler, for
    ``state_dict``/``load_state_dict`` (a checkpoint helper's ``scheduler.state_dict() if scheduler else None``):
    MindSpore's schedulers have neither; ``mindport.runtime.optim`` gives torch's (decided on the type at run time,
    so a model or optimizer so named still answers its own)."""
    return "sched" in receiver.rsplit(".", 1)[-1].lower()


def _definitely_assigned(stmts) -> set[str]:
    """The names a block's statements bind whenever they run: those of its simple statements and of its ``with``
    bodies (which always run), not those bound only inside an ``if``, a loop or a ``try``."""
    names: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            names |= reads_writes(stmt)[1]
        elif isinstance(stmt, cst.With):
            names |= _definitely_assigned(stmt.body.body)
    return names


def _mode_set_before(scope: cst.CSTNode, loop: cst.For, name: str, in_body: bool = True) -> bool:
    """Does a statement line set ``name``'s mode (``name.train(...)``, ``name.eval()``, ``name.set_train(...)``) in
    the loop's body or before the loop, in its block or an enclosing block of ``scope``, after the last line binding
    ``name`` there? Only lines of those blocks count, not ones nested in an earlier loop or branch, nor ones before
    ``name`` was bound again (a first model's ``model.train()`` says nothing of a second model built later under the
    same name)."""
    def path(node):
        if node is loop:
            return []
        for child in node.children:
            found = path(child)
            if found is not None:
                return [(node, child), *found]
        return None

    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) and in_body else ()
    if any(_sets_mode_of(line, name) for line in body):
        return True
    for parent, child in reversed(path(scope) or []):  # the innermost block first, each back from the loop
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            siblings = list(parent.body)
            index = next((i for i, s in enumerate(siblings) if s is child), 0)
            found = _mode_set_in(siblings[:index], name)
            if found is not None:
                return found
    return False


def _mode_set_in(lines, name: str):
    """Going back from the end of ``lines``: True at a line setting ``name``'s mode, False at a line binding
    ``name`` (a model built there: what came before set another one's mode), None when neither occurs."""
    for line in reversed(lines):
        if _sets_mode_of(line, name):
            return True
        if isinstance(line, cst.SimpleStatementLine) and name in reads_writes(line)[1]:
            return False
    return None


def _sets_mode_of(line, name: str) -> bool:
    """Is ``line`` a statement line calling ``name.train(...)``, ``name.eval()`` or ``name.set_train(...)``?"""
    return isinstance(line, cst.SimpleStatementLine) and any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value in ("train", "eval", "set_train")
        and dotted_name(call.func.value) == name for call in _all_calls(line))


def _pairs_param_groups(iterable: cst.BaseExpression) -> bool:
    """``zip(opt.param_groups, ...)`` / ``enumerate(opt.param_groups)``: a loop whose targets include an optimizer's
    param groups (a warmup library's ``for group, params in zip(self.optimizer.param_groups, self.warmup_params):
    group['lr'] *= omega``)."""
    return isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
        and iterable.func.value in ("zip", "enumerate") \
        and any(isinstance(a.value, cst.Attribute) and a.value.attr.value == "param_groups" for a in iterable.args)

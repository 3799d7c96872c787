"""Small run-time helpers that converted code imports when MindSpore has no built-in equivalent.

* :mod:`mindport.runtime.math` (``mp_math``): ``torch.*`` functions (and Tensor methods that mean the same), other
  than the ones below; ``torch.jit``'s decorators and queries (``jit_script`` ... the identity, False).
* :mod:`mindport.runtime.linalg` (``mp_linalg``): linear algebra: ``torch.linalg.*``, ``torch.lu``/``qr``/
  ``triangular_solve``/``cholesky_inverse``/``matrix_exp``/``pinverse``/``chain_matmul``/``ormqr``.
* :mod:`mindport.runtime.special` (``mp_special``): ``torch.special.*`` (and its ``torch.*`` aliases), torch.fft's
  hfft/ihfft family.
* :mod:`mindport.runtime.nn_functional` (``mp_F``): ``torch.nn.functional.*`` and the ``torch.*`` aliases of it.
* :mod:`mindport.runtime.tensor` (``mp_tensor``): Tensor methods with no ``torch.*`` function of the same meaning
  (casts, ``type``, ``element_size``, ``new_tensor``/``new_full``, ``unfold``, ``polygamma``), and the legacy typed
  constructors (``torch.FloatTensor(data)``, ``torch.LongTensor(*sizes)`` ...).
* :mod:`mindport.runtime.inplace` (``mp_inplace``): torch's in-place operations (``x.sin_()``, ``torch.relu_(x)``).
* :mod:`mindport.runtime.layers` (``mp_nn``): ``torch.nn`` layers MindSpore lacks, as Cells, and
  ``Embedding.from_pretrained`` / ``Module.add_module`` for Cells.
* :mod:`mindport.runtime.losses` (``mp_losses``): loss Cells that accept torch's int64 class labels.
* :mod:`mindport.runtime.optim` (``mp_optim``): ``torch.optim.Adam`` with torch's update (MindSpore's experimental Adam
  adds eps before the bias correction and ignores amsgrad).
* :mod:`mindport.runtime.distributions` (``mp_dist``): ``torch.distributions``' distributions (Normal,
  Categorical, OneHotCategorical, ... as docs/mappings.md lists), transforms and kl_divergence with torch's properties
  and methods.
* :mod:`mindport.runtime.lightning` (``mp_lightning``): PyTorch Lightning's ``LightningModule`` as a Cell base (a
  converted ``class Net(pl.LightningModule)``), with ``save_hyperparameters``/``hparams``/``log`` decided at run time
  (``lightning_members``, shared with the torch reference discovery uses when Lightning is missing),
  ``LightningDataModule`` as a plain class, and ``Trainer`` (automatic optimization: value_and_grad over
  ``training_step``, the optimizer of ``configure_optimizers``); ``mappings/data/surface/lightning_surface.toml``
  lists every member and how it ends.
* :mod:`mindport.runtime.swa` (``mp_swa``): ``torch.optim.swa_utils``' ``AveragedModel`` (EMA / SWA copies of a
  model's weights, torch's ``update_parameters``) and its averaging functions.
* :mod:`mindport.runtime.init` (``mp_init``): ``torch.nn.init`` for the calls the init rule does not rewrite.
* :mod:`mindport.runtime.einops_backend`: einops for MindSpore tensors: ``rearrange``/``reduce``/``repeat`` that
  compile in a static graph, and an einops backend (importing the module registers it).
* :mod:`mindport.runtime.einops_layers`: ``Rearrange``/``Reduce`` as Cells (for ``einops.layers.torch``).
* :mod:`mindport.runtime.containers`: ``ParameterList``/``ParameterDict`` Cells that name their parameters like torch
  (``scales.0``), so torch weights line up by name; ``ModuleDict``, which holds any Cell (``CellDict`` refuses a
  CellList) and is read like a Cell in a static graph; ``ModuleList``, a CellList that holds None members too;
  ``ModuleListLayer``, the base of a ModuleList subclass with its own forward (a SequentialCell: a graph calls it);
  torch's ``parameters()``/``named_parameters()``/``buffers()`` of a Cell.
* :mod:`mindport.runtime.frozen` (loaded with any runtime module): a Parameter frozen after it was made
  (``p.requires_grad = False``) is marked, so it is told from a buffer (a non-trainable Parameter from birth).
  Optimizer steps skip parameters frozen when they run, and count each parameter's own steps (Adam's bias corrections).
* :mod:`mindport.runtime.synchronous` (loaded with any runtime module): PyNative on the CPU launches operators
  synchronously (``launch_blocking``, before the first kernel: a Python training loop runs about three times faster).
* :mod:`mindport.runtime.rnn` (``mp_rnn``): ``torch.nn.utils.rnn``: pad_sequence, unpad_sequence, PackedSequence and
  its packing/unpacking functions (PyNative only: their shapes depend on the lengths).
* :mod:`mindport.runtime.data` (``mp_data``): ``torch.utils.data``'s samplers as Python iterables of indices
  (mindspore.dataset's are not iterable); GeneratorDataset(sampler=...) takes them.
* :mod:`mindport.runtime.training` (``mp_train``): torch's ``.grad`` for converted training code: ``backward``
  adding into it, ``zero_grad``, ``grads_of(opt)`` for ``opt.step()``, clipping on it, a CPU ``GradScaler``/``autocast``
  in full precision, ``LBFGS`` with its closure (PyNative only: the Python training loop's pieces).
* :mod:`mindport.runtime.signal` (``mp_signal``): ``torch.signal.windows`` (sym/periodic windows, torch's formulas).
* :mod:`mindport.runtime.adapt` (``mp_adapt``): the runtime binding fallback: ``mp_adapt.api("torch.nn.Conv2d")`` maps
  a call's arguments through the entry when the call happens (``**kwargs`` at the call site, an API passed as a value).
* :mod:`mindport.runtime.foreach` (``mp_foreach``): ``torch._foreach_*`` (list operations of hand-written optimizers).
* :mod:`mindport.runtime.framework` (``mp_framework``): torch names with no numerical meaning: the
  ``torch.compile``/``torch.fx.wrap`` decorators, ``torch.dtype``/``device``/``Size`` as types, constants, memory
  formats, ``finfo``.
* :mod:`mindport.runtime.ecosystem` (``mp_ecosystem``): pieces of torch-based packages (timm's DropPath, Mlp,
  to_2tuple …, torchvision's StochasticDepth).

Everything here compiles in a static graph (``GRAPH_MODE``, ``@jit``) and is proven there, except the functions
whose mapping entries say ``graph = "..."``, which raise a ``mindport:`` error inside a graph;
:mod:`mindport.runtime._graph` says what differs there (torch's named tuples are plain tuples in a graph).

Nothing here is imported by ``import mindport.runtime`` itself: each module loads MindSpore only when used.
:mod:`mindport.runtime.numpy_ints` (loaded with ``_graph`` and ``containers``, which the runtime modules import) lets a
MindSpore tensor take numpy integers as indices and slice bounds, and ``initializer`` and some ``ops`` functions take
them and 0-d integer tensors as sizes, as torch's do, and a tensor's setitem drop the value's leading size-1 axes, as
torch's does; :mod:`mindport.runtime.numpy_stream` (loaded with them) builds MindSpore's layers
without moving numpy's global random stream, as torch's are; :mod:`mindport.runtime.sequential_members` (loaded with
them) runs a layer set on a ``SequentialCell`` by attribute, as torch's ``nn.Sequential`` does; :mod:`mindport.runtime.container_slices` (loaded with them) leaves the parameter
names of a ``SequentialCell``/``CellList`` slice's layers as they were, as torch's slices do (MindSpore's renamed them: a
slice in ``construct`` broke GRAPH_MODE with duplicate names); :mod:`mindport.runtime.unbatched` (loaded by
every runtime module converted code imports, and imported by the converter into a file of MindSpore's own layers
that does not show their inputs batched) lets MindSpore's convolutions, LPPool2d, AdaptiveAvg/MaxPool1d, recurrent
layers and cells take torch's unbatched inputs (and the cells a missing ``hx`` as zeros); :mod:`mindport.runtime.layers` makes ``Cell.set_train``
reach a model's own ``train`` override in its sub-cells (``train_override``).
"""

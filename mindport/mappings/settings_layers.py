"""Runtime layers that exist only to read some of their settings back in torch's form, and MindSpore's own class
each is a subclass of (same constructor arguments, same computation).

``mindport.runtime.layers.Conv1d`` (the ``torch.nn.Conv1d`` entry's ``nn`` target) keeps ``kernel_size``, ``stride``,
``dilation`` and ``padding`` as torch's 1-tuples, where MindSpore's Conv1d keeps them 2-D (``(1, k)``), and takes the
explicit ``(0, 0)`` the conversion writes for torch's ``padding='valid'`` (so it reads back 'valid'). In a project
where no code touches those settings (``mindport.migrator.project.conv1d_settings_unread``) the converter writes
MindSpore's own class instead (``TableCallTransform``, ``settings_native``); the weight transfer, the parity hooks and
the runtime adapters know that class as the same entry's layer (``Registry.layer_for_target``,
``mindport.runtime.adapt.layer_entry``)."""
from __future__ import annotations

SETTINGS_LAYERS = {"mindport.runtime.layers.Conv1d": "mindspore.nn.Conv1d"}

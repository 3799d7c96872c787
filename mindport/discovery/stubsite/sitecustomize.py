"""Put on PYTHONPATH of a side process to stub the modules this machine lacks (with MINDPORT_STUB_MISSING set:
``mindport.discovery.stubs``) and to run CUDA-only torch code on the CPU (with MINDPORT_CUDA_AS_CPU set:
``mindport.discovery.cuda_cpu``) and to import the project's scripts that train on import as their definitions only
(with MINDPORT_SCRIPT_DEFINITIONS set: ``mindport.discovery.scripts``)."""
import os

if os.environ.get("MINDPORT_SCRIPT_DEFINITIONS"):
    from mindport.discovery import scripts

    scripts.install()

if os.environ.get("MINDPORT_STUB_MISSING"):
    from mindport.discovery import stubs

    stubs.install()
if os.environ.get("MINDPORT_CUDA_AS_CPU"):  # the torch side (the MindSpore side never has it)
    from mindport.discovery import cuda_cpu, eager_compile, legacy_names, legacy_torch, zeroed_memory

    legacy_torch.install()  # torch._six for code written for torch 1.x
    legacy_names.install()  # names removed from Python/NumPy/SciPy (mindport/legacy_names.toml), as they were

    # with torch.empty and kin as zeros, as the port writes them; torch.compile as the model itself, as the port maps it
    cuda_cpu.install_on_import(zeroed_memory.install, eager_compile.install)

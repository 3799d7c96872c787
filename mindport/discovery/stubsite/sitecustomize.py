"""Put on PYTHONPATH of a side process (with MINDPORT_STUB_MISSING set) to stub the modules this machine lacks
(``mindport.discovery.stubs``)."""
import os

if os.environ.get("MINDPORT_STUB_MISSING"):
    from mindport.discovery import stubs

    stubs.install()
